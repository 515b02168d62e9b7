// Reshapes move below the elementwise ops that read them, so a chain of elementwise ops runs in
// one shape and fuses into one loop kernel (XLA's reshape mover).
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// An elementwise op whose operands are reshapes of values of one shape S (and single-element
/// values, which broadcast alike in any shape of their rank or more) runs on those values in S,
/// and one reshape of its result takes its place: op(reshape(x), reshape(y)) ->
/// reshape(op(x, y)). Repeated, a reshape sinks down a chain until an op reads it with another
/// operand, and meets the reshape back to S that a linear layer's reader applies:
/// reshape(reshape(x)) -> reshape(x), and a reshape to x's own shape -> x. Values do not change:
/// a reshape keeps the row-major order of elements. Returns true if the graph changed.
bool sink_reshapes(ir::Graph& g);

}  // namespace lt::passes
