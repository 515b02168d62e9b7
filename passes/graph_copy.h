// The two ends of a pass that rebuilds a graph node by node into a fresh one.
#pragma once
#include <span>
#include <vector>

#include "ir/graph.h"

namespace lt::passes {

/// An empty graph with g's name and parameters, to rebuild g's nodes into.
ir::Graph empty_copy(const ir::Graph& g);

/// v in the rebuilt graph, where new_id[n] is the node that stands for g's node n.
inline ir::Value renumbered(ir::Value v, std::span<const int> new_id) {
  return v.is_param() ? v : ir::Value::node(new_id[v.def], v.index);
}

/// Ends a rebuild: `out` takes `results` (one per result of g, same order, so g's donations keep
/// their meaning) and g's donations, then replaces g.
void replace_graph(ir::Graph& g, ir::Graph out, std::vector<ir::Value> results);
/// The same with g's own results, renumbered (new_id as renumbered's).
void replace_graph(ir::Graph& g, ir::Graph out, std::span<const int> new_id);

}  // namespace lt::passes
