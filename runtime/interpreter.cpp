#include "runtime/interpreter.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

InterpretedGraph::InterpretedGraph(ir::Graph g) : graph_(std::move(g)) {
  ir::verify(graph_);
  const int n = static_cast<int>(graph_.nodes().size());
  std::vector<int> last_use(n, -1);
  for (int id = 0; id < n; ++id)
    for (ir::Value v : graph_.node(id).inputs)
      if (!v.is_param()) last_use[v.def] = id;
  for (ir::Value v : graph_.results())
    if (!v.is_param()) last_use[v.def] = n;  // results live to the end
  free_after_.resize(n);
  for (int id = 0; id < n; ++id)
    if (last_use[id] >= 0 && last_use[id] < n) free_after_[last_use[id]].push_back(id);
}

std::vector<BufferPtr> InterpretedGraph::run(std::span<const BufferPtr> params) const {
  const ir::Graph& g = graph_;
  LT_CHECK(params.size() == g.params().size(), "graph @{} takes {} parameters, got {}", g.name(),
           g.params().size(), params.size());
  for (size_t i = 0; i < params.size(); ++i)
    LT_CHECK(params[i] && params[i]->bytes() == g.params()[i].type.bytes(),
             "parameter {} of @{}: buffer does not match {}", i, g.name(),
             type_str(g.params()[i].type));
  const int n = static_cast<int>(g.nodes().size());
  std::vector<std::vector<BufferPtr>> values(n);
  auto buffer_of = [&](ir::Value v) -> const BufferPtr& {
    return v.is_param() ? params[v.param_index()] : values[v.def][v.index];
  };
  std::vector<TensorRef> ins, outs;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    ins.clear();
    outs.clear();
    for (ir::Value v : node.inputs) ins.push_back({buffer_of(v)->data(), &g.type(v)});
    for (const TensorType& t : node.types) {
      values[id].push_back(Buffer::allocate(t.bytes()));
      outs.push_back({values[id].back()->data(), &t});
    }
    try {
      run_kernel(node.op, node.attrs, ins, outs);
    } catch (const Error& e) {
      // Data-dependent faults (an id out of range) surface at run time: name the traced call.
      throw Error(node.loc.empty() ? std::string(e.what())
                                   : fmt::format("{} (traced at {})", e.what(), node.loc));
    }
    for (int dead : free_after_[id]) values[dead].clear();
  }
  std::vector<BufferPtr> results;
  for (ir::Value v : g.results()) results.push_back(buffer_of(v));
  return results;
}

}  // namespace lt::rt
