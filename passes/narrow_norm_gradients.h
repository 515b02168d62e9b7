// Batch norm gradients that write the bf16 their readers would cast them to.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// A batch_norm_grad whose dx (f32) every reader casts to bf16 (autocast's pattern: the
/// convolution before the batch norm ran in bf16, and the cast's gradient narrows dx again)
/// writes dx in bf16 itself (bf16_dx), rounded from the same f32 value as the cast rounds it, so
/// every bit stays; the casts go, and the kernel writes half the bytes where a loop kernel read
/// them all back. Graph results keep their type. Returns true if the graph changed.
bool narrow_norm_gradients(ir::Graph& g);

}  // namespace lt::passes
