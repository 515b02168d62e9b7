// The reference interpreter: runs a verified graph node by node with the eager kernels. Lazy mode
// uses it as its executor until the compiler lands, and it stays the oracle compiled code is
// tested against.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "runtime/buffer.h"

namespace lt::rt {

using BufferPtr = std::shared_ptr<Buffer>;

/// A graph prepared for repeated runs: verified once, with each value's last use precomputed so
/// intermediates are freed as soon as nothing later reads them.
class InterpretedGraph {
 public:
  explicit InterpretedGraph(ir::Graph g);
  const ir::Graph& graph() const { return graph_; }
  /// One buffer per graph result. Parameters must match the graph's parameter types in size.
  std::vector<BufferPtr> run(std::span<const BufferPtr> params) const;

 private:
  ir::Graph graph_;
  std::vector<std::vector<int>> free_after_;  // node id -> node ids whose outputs die after it
};

}  // namespace lt::rt
