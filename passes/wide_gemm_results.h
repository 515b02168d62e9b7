// GEMMs and convolutions that keep their f32 accumulator when it is widened again anyway.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// A matmul or convolution (forward or either gradient) on bf16 operands accumulates in f32 and
/// rounds its result to bf16; where every reader of that result casts it back to f32 (autocast's
/// pattern: a GEMM in bf16, the ops after it in f32), the op writes the f32 accumulator instead
/// (f32_out) and the casts go. The values then carry more precision than the traced graph's
/// (XLA's "excess precision"): the rounding is an error the graph would have added, so results
/// move closer to an all-f32 run and away from eager's bits. bf16 has f32's exponent range, so
/// only mantissa bits are gained; f16 results keep their rounding, whose overflow to infinity is
/// what a loss scaler watches for. Graph results, and values any other op reads, keep their
/// rounding. LowerOptions::wide_gemm_results (setting LT_WIDE_GEMM_RESULTS) turns the stage off.
/// Returns true if the graph changed.
bool wide_gemm_results(ir::Graph& g);

}  // namespace lt::passes
