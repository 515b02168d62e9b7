// Ops that write, in place of their result, the cast every reader makes of it.
#pragma once
#include <functional>

#include "ir/graph.h"

namespace lt::passes {

/// For each node `takes` accepts whose first result is no graph result and is read only by
/// casts to `to`: that result becomes `to` (the node's kernel writes it so, told by the
/// attributes `retag` makes of the node's), and the casts go, their readers reading the node
/// (one nothing reads is dead, and dce drops it either way). The mechanism of
/// wide_gemm_results and narrow_norm_gradients. Returns true if the graph changed.
bool fold_result_casts(ir::Graph& g, DType to, const std::function<bool(const ir::Node&)>& takes,
                       const std::function<ir::Attrs(const ir::Attrs&)>& retag);

}  // namespace lt::passes
