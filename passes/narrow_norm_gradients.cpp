#include "passes/narrow_norm_gradients.h"

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "passes/graph_copy.h"

namespace lt::passes {
namespace {

bool narrows_to_bf16(const ir::Node& n) {
  return n.op == ir::Op::Cast && std::get<ir::CastAttrs>(n.attrs).to == DType::BF16;
}

}  // namespace

bool narrow_norm_gradients(ir::Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  // Per node: whether it is a batch_norm_grad with an f32 dx that only casts to bf16 read (one
  // nothing reads is dead, and dce drops it either way).
  std::vector<char> narrow(n, 0);
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    narrow[id] = node.op == ir::Op::BatchNormGrad && node.types[0].dtype == DType::F32;
  }
  for (const ir::Node& node : g.nodes())
    for (ir::Value v : node.inputs)
      if (!v.is_param() && v.index == 0 && !narrows_to_bf16(node)) narrow[v.def] = 0;
  for (ir::Value v : g.results())
    if (!v.is_param() && v.index == 0) narrow[v.def] = 0;
  if (std::find(narrow.begin(), narrow.end(), 1) == narrow.end()) return false;

  ir::Graph out = empty_copy(g);
  std::vector<int> new_id(n, -1);
  auto remap = [&](ir::Value v) { return renumbered(v, new_id); };
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    const ir::Value src = node.op == ir::Op::Cast ? node.inputs[0] : ir::Value::param(0);
    if (!src.is_param() && src.index == 0 && narrow[src.def]) {
      new_id[id] = ins[0].def;  // the cast of dx: dx is bf16 itself now
      continue;
    }
    if (narrow[id]) {
      TypeList types = node.types;
      types[0].dtype = DType::BF16;
      auto attrs = std::get<ir::BatchNormGradAttrs>(node.attrs);
      attrs.bf16_dx = true;
      new_id[id] = out.add_typed(node.op, std::move(ins), attrs, std::move(types), node.loc).def;
      continue;
    }
    new_id[id] = out.add_typed(node.op, std::move(ins), node.attrs, node.types, node.loc).def;
  }
  std::vector<ir::Value> results;
  for (ir::Value v : g.results()) results.push_back(remap(v));
  replace_graph(g, std::move(out), std::move(results));
  return true;
}

}  // namespace lt::passes
