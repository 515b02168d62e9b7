#include "passes/result_casts.h"

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "passes/graph_copy.h"

namespace lt::passes {

bool fold_result_casts(ir::Graph& g, DType to, const std::function<bool(const ir::Node&)>& takes,
                       const std::function<ir::Attrs(const ir::Attrs&)>& retag) {
  const int n = static_cast<int>(g.nodes().size());
  auto casts_to = [&](const ir::Node& node) {
    return node.op == ir::Op::Cast && std::get<ir::CastAttrs>(node.attrs).to == to;
  };
  std::vector<char> folds(n, 0);  // per node: whether its first result becomes `to`
  for (int id = 0; id < n; ++id) folds[id] = takes(g.node(id));
  for (const ir::Node& node : g.nodes())
    for (ir::Value v : node.inputs)
      if (!v.is_param() && v.index == 0 && !casts_to(node)) folds[v.def] = 0;
  for (ir::Value v : g.results())
    if (!v.is_param() && v.index == 0) folds[v.def] = 0;
  if (std::find(folds.begin(), folds.end(), 1) == folds.end()) return false;

  ir::Graph out = empty_copy(g);
  std::vector<int> new_id(n, -1);
  auto remap = [&](ir::Value v) { return renumbered(v, new_id); };
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    if (node.op == ir::Op::Cast) {
      const ir::Value src = node.inputs[0];
      if (!src.is_param() && src.index == 0 && folds[src.def]) {
        new_id[id] = ins[0].def;  // the node writes this cast's result itself now
        continue;
      }
    }
    if (folds[id]) {
      TypeList types = node.types;
      types[0].dtype = to;
      new_id[id] =
          out.add_typed(node.op, std::move(ins), retag(node.attrs), std::move(types), node.loc)
              .def;
      continue;
    }
    new_id[id] = out.add_typed(node.op, std::move(ins), node.attrs, node.types, node.loc).def;
  }
  replace_graph(g, std::move(out), new_id);
  return true;
}

}  // namespace lt::passes
