// The pending graph of some tensors, cut and hashed. The ir::Graph itself is built only when
// needed (a cache miss, a dump, graph_text): a cache hit costs one walk over the pending nodes,
// and the hash it computes is ir::structural_hash of the graph build_graph() would make.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "frontend/lazy/lazy_node.h"
#include "frontend/tensor_impl.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace lt::lazy {

struct Cut {
  uint64_t hash = 0;  ///< ir::structural_hash(build_graph(*this))
  std::vector<rt::BufferPtr> params;
  std::vector<const TensorType*> param_types;
  std::vector<LazyNode*> order;                    // nodes in trace order (graph node ids)
  std::vector<ir::Value> inputs;                   // every node's inputs, node after node
  std::vector<ir::Value> result_values;
  std::vector<std::pair<LazyNode*, int>> results;  // (node, output) per graph result
  std::vector<ir::Donation> donations;
};

/// Whether output `index` of `n` was computed by a graph that already ran.
inline bool materialized(const LazyNode* n, int index) {
  return index < static_cast<int>(n->results.size()) && n->results[index];
}

/// The pending nodes the targets depend on, in trace order; device data and outputs of nodes
/// that already ran become parameters (each buffer once). A target rebound in place from device
/// data this graph reads may take over that buffer (a donation, one result per parameter).
Cut cut(std::span<TensorImpl* const> targets);

ir::Graph build_graph(const Cut& c);

}  // namespace lt::lazy
