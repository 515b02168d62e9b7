#include "passes/dce.h"

#include <algorithm>
#include <vector>

#include "passes/graph_copy.h"

namespace lt::passes {

bool dce(ir::Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<bool> live(n, false);
  for (ir::Value v : g.results())
    if (!v.is_param()) live[v.def] = true;
  for (int id = n - 1; id >= 0; --id)  // users come after producers
    if (live[id])
      for (ir::Value v : g.node(id).inputs)
        if (!v.is_param()) live[v.def] = true;
  if (std::find(live.begin(), live.end(), false) == live.end()) return false;

  ir::Graph out = empty_copy(g);
  std::vector<int> new_id(n, -1);
  auto remap = [&](ir::Value v) { return renumbered(v, new_id); };
  for (int id = 0; id < n; ++id) {
    if (!live[id]) continue;
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    new_id[id] = out.add_typed(node.op, std::move(ins), node.attrs, node.types, node.loc).def;
  }
  replace_graph(g, std::move(out), new_id);
  return true;
}

}  // namespace lt::passes
