// What a loop kernel may hold (LoopRole): the contract, without any backend's choices.
#include "ir/loop_kernel.h"

#include <algorithm>
#include <map>

namespace lt::ir {

bool is_foldable_view(Op op) { return info(op).loop == LoopForm::IndexMap; }

Ints reduced_axes(const Graph& g, int id) {
  const auto& a = std::get<ReduceAttrs>(g.node(id).attrs);
  if (!a.axes.empty()) return a.axes;
  Ints all(g.type(g.node(id).inputs[0]).shape.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return all;
}

std::vector<LoopRole> loop_roles(const Graph& g, std::span<const int> nodes) {
  std::map<int, LoopRole> role;  // by node id, for the kernel's own nodes
  std::vector<LoopRole> out;
  for (int id : nodes) {
    const Node& n = g.node(id);
    auto inner = [&](Value v) -> std::optional<LoopRole> {
      if (v.is_param()) return std::nullopt;
      const auto it = role.find(v.def);
      return it == role.end() ? std::nullopt : std::optional(it->second);
    };
    LoopRole r = LoopRole::Invalid;
    if (info(n.op).loop == LoopForm::Elementwise) {
      r = LoopRole::Compute;
    } else if (info(n.op).loop == LoopForm::Reduction) {
      r = LoopRole::Reduction;
    } else if (is_foldable_view(n.op)) {
      const bool folds = std::all_of(n.inputs.begin(), n.inputs.end(), [&](Value v) {
        const auto k = inner(v);
        return !k || *k == LoopRole::FoldedView;
      });
      const auto k = inner(n.inputs[0]);
      if (folds)
        r = LoopRole::FoldedView;
      else if (n.op == Op::Reshape && k != LoopRole::Invalid)
        r = LoopRole::Alias;
      else if (n.op == Op::Expand && k == LoopRole::Compute && g.type(n.inputs[0]) == n.types[0])
        r = LoopRole::Compute;  // a no-op expand of a computed value
    }
    role[id] = r;
    out.push_back(r);
  }
  return out;
}

}  // namespace lt::ir
