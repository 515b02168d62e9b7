// Fusion plan data: group inputs and outputs, an epilogue group's loop, the unfused plan.
#include "ir/fusion_plan.h"

#include <set>
#include <utility>

namespace lt::ir {

FusionGroup epilogue_loop(const Graph& g, const FusionGroup& grp) {
  FusionGroup loop;
  loop.kind = KernelKind::Loop;
  loop.shape = grp.shape;
  loop.nodes.assign(grp.nodes.begin() + 1, grp.nodes.end());
  const std::set<int> inside(loop.nodes.begin(), loop.nodes.end());
  std::set<Value> seen;
  for (int id : loop.nodes)
    for (Value v : g.node(id).inputs)
      if ((v.is_param() || !inside.count(v.def)) && seen.insert(v).second) loop.inputs.push_back(v);
  for (Value v : grp.outputs)
    if (v.is_param() || v.def != grp.nodes.front()) loop.outputs.push_back(v);
  return loop;
}

void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups) {
  const ValueIndex index(g);
  std::vector<bool> escapes(index.size(), false);  // read by another kernel or returned
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) escapes[index(v)] = true;
  for (Value v : g.results()) escapes[index(v)] = true;

  std::vector<int> seen(index.size(), -1);  // last kernel that listed the value as an input
  for (size_t k = 0; k < groups.size(); ++k) {
    FusionGroup& grp = groups[k];
    grp.inputs.clear();
    grp.outputs.clear();
    for (int id : grp.nodes) {
      for (Value v : g.node(id).inputs) {
        if (!v.is_param() && kernel[v.def] == static_cast<int>(k)) continue;
        if (std::exchange(seen[index(v)], static_cast<int>(k)) != static_cast<int>(k))
          grp.inputs.push_back(v);
      }
    }
    for (int id : grp.nodes)
      for (int i = 0; i < g.num_outputs(id); ++i)
        if (escapes[index(Value::node(id, i))]) grp.outputs.push_back(Value::node(id, i));
  }
}

FusionPlan unfused_plan(const Graph& g) {
  FusionPlan plan;
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> kernel(n);
  for (int id = 0; id < n; ++id) {
    kernel[id] = id;
    FusionGroup& grp = plan.groups.emplace_back();
    grp.kind = KernelKind::Library;
    grp.nodes = {id};
  }
  fill_group_io(g, kernel, plan.groups);
  return plan;
}

}  // namespace lt::ir
