// What a loop kernel may hold (LoopRole), and the backend's choices of what one takes on:
// which reductions it ends in and which library calls it may follow as an epilogue.
#include "ir/loop_kernel.h"

#include <algorithm>
#include <map>

namespace lt::ir {

bool loop_computes(Op op, DType in, DType out) {
  // Only the rows whose operand column takes storage types (cast) read or make bf16 and f16.
  const bool stored = info(op).operands == OperandKind::Stored;
  return (stored || (is_compute_type(in) && is_compute_type(out))) && !checks_data(op, out);
}

bool loop_computes(const Graph& g, int id) {
  const Node& n = g.node(id);
  const DType out = n.types[0].dtype;
  const DType in = n.inputs.empty() ? out : g.type(n.inputs[data_operand(n.op)]).dtype;
  return loop_computes(n.op, in, out);
}

bool is_foldable_view(Op op) { return info(op).lowering == Lowering::IndexMap; }

bool is_loop_reduction(const Graph& g, int id) {
  const Node& n = g.node(id);
  if (info(n.op).lowering != Lowering::LoopReduce) return false;
  const TensorType& in = g.type(n.inputs[0]);
  if (!is_compute_type(in.dtype) || in.dtype == DType::Bool) return false;
  // Nothing to accumulate when an output has at most one element to reduce (and a kernel that
  // wrote such an output over its donated input would overwrite what it still reads).
  return in.numel() > 0 && n.types[0].numel() > 0 && in.numel() / n.types[0].numel() >= 2;
}

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
    if (info(n.op).lowering == Lowering::Loop) {
      r = LoopRole::Compute;
    } else if (info(n.op).lowering == Lowering::LoopReduce) {
      if (is_loop_reduction(g, id)) r = LoopRole::Reduction;
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

bool takes_epilogue(const Graph& g, int id) {
  const Node& n = g.node(id);
  const Lowering l = info(n.op).lowering;
  // bf16 and f16 outputs (autocast) too: their epilogue starts with the cast back to f32.
  return (l == Lowering::Epilogue || l == Lowering::ImgEpilogue) && n.types.size() == 1 &&
         is_float(n.types[0].dtype);
}

bool epilogue_materializes(const Graph& g, const FusionGroup& grp) {
  const int lib = grp.nodes.front();
  if (std::find(grp.outputs.begin(), grp.outputs.end(), Value::node(lib)) != grp.outputs.end())
    return true;
  return info(g.node(lib).op).lowering != Lowering::ImgEpilogue;
}

}  // namespace lt::ir
