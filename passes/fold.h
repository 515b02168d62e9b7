// Constant folding: ops over `full` constants become one `full`, computed in the pass itself
// (passes depend on ir only, so no kernels run here).
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Replaces every elementwise node whose operands are all `full` constants (any shape: a full is
/// a splat) by one `full` of its result type, and every reshape, expand, permute or slice of a
/// full by a full of the new shape; repeats until nothing folds, then drops dead nodes.
/// Values follow ir/ops/elementwise.def and the kernels: computed in double and rounded once to
/// the result dtype (f32 rounding, integer truncation toward zero, bool), NaN-propagating
/// maximum/minimum, truncating integer division. Left unfolded: random ops, integer division by
/// zero, integer overflow, conversions the kernels leave undefined, f16/bf16 arithmetic, and
/// integers beyond 2^53 (a full stores a double). Transcendental ops (exp, tanh, ...) use the C
/// library in double, which may differ from the vectorized kernels in the last place.
/// Returns true if the graph changed.
bool fold(ir::Graph& g);

}  // namespace lt::passes
