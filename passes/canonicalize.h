// Canonicalization: local algebraic identities that remove work without changing any value.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Applies local identities until none matches, then drops the nodes left dead. "0" and "1" are
/// `full` constants (seen through views); an identity on a binary op applies only when the kept
/// operand already has the result's type (x * ones of a bigger shape is a broadcast, not x):
///   x*1, 1*x, x+z, z+x, x-0, x/1 -> x        neg(neg(x)) -> x
///   reshape(reshape(x)) -> reshape(x)        reshape, expand or cast to x's own type -> x
///   permute(permute(x)) -> one permute       identity permute -> x
///   expand(expand(x)) -> expand(x)           slice that takes everything -> x
///   cast(cast(x: A, B), A) -> x when A -> B is exact (f16/bf16/f32 -> wider float,
///   i32 -> i64/f64, bool -> any)
/// For floats z is -0.0 and the subtracted 0 is +0.0: x + 0.0 and x - (-0.0) stay, since for
/// x = -0.0 they give +0.0 (for integers any zero is both).
/// Parameters, results and donations are kept. Returns true if the graph changed.
bool canonicalize(ir::Graph& g);

}  // namespace lt::passes
