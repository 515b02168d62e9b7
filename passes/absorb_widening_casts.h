// Library calls that read a narrow float operand themselves.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Where an op's row says FloatWidensFirst (batch_norm, batch_norm_grad) and its first operand is
/// cast(x) from f16 or bf16 to the op's f32, the op reads x instead: its kernel widens each
/// element as it loads it, which is exact, so results keep their bits. Autocast's convolutions end
/// in such casts; the batch norm after one then reads half the bytes, and the cast, left without
/// users, is dropped (a later dce), so the convolution writes only its narrow result. Parameters,
/// results and donations are kept. Returns true if the graph changed.
bool absorb_widening_casts(ir::Graph& g);

}  // namespace lt::passes
