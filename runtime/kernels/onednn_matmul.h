// oneDNN's matmul primitive for one GEMM block on the calling thread (the only place, with its
// .cpp, that sees oneDNN's headers).
#pragma once
#include "runtime/kernels/gemm.h"

namespace lt::rt::onednn {

/// The instruction set oneDNN runs bf16 matmuls with on this CPU: "amx", "avx512_core_bf16", or
/// nullptr when it has no bf16 instructions (oneDNN would emulate them, slower than f32).
const char* bf16_isa();

/// C = alpha * op(A) op(B) + beta * C for bf16 A and B (C bf16 or f32), k > 0, on the calling
/// thread only. Primitives are created once per shape, strides, transposes, dtypes, alpha, beta.
void matmul(const GemmArgs& g);

}  // namespace lt::rt::onednn
