#include "passes/wide_gemm_results.h"

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "passes/graph_copy.h"

namespace lt::passes {
namespace {

bool gemm_like(ir::Op op) {
  return op == ir::Op::MatMul || op == ir::Op::Conv2d || op == ir::Op::Conv2dInputGrad ||
         op == ir::Op::Conv2dWeightGrad;
}

bool widens_to_f32(const ir::Node& n) {
  return n.op == ir::Op::Cast && std::get<ir::CastAttrs>(n.attrs).to == DType::F32;
}

ir::Attrs with_f32_out(ir::Attrs a) {
  std::visit(
      [](auto& s) {
        if constexpr (requires { s.f32_out; }) s.f32_out = true;
      },
      a);
  return a;
}

}  // namespace

bool wide_gemm_results(ir::Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  // Per node: whether it is a bf16 GEMM whose every reader widens its result to f32 (one nothing
  // reads is dead, and dce drops it either way).
  std::vector<char> wide(n, 0);
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    wide[id] = gemm_like(node.op) && node.types[0].dtype == DType::BF16;
  }
  for (const ir::Node& node : g.nodes())
    for (ir::Value v : node.inputs)
      if (!v.is_param() && !widens_to_f32(node)) wide[v.def] = 0;
  for (ir::Value v : g.results())
    if (!v.is_param()) wide[v.def] = 0;
  if (std::find(wide.begin(), wide.end(), 1) == wide.end()) return false;

  ir::Graph out = empty_copy(g);
  std::vector<int> new_id(n, -1);
  auto remap = [&](ir::Value v) { return renumbered(v, new_id); };
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    if (node.op == ir::Op::Cast && !node.inputs[0].is_param() && wide[node.inputs[0].def]) {
      new_id[id] = ins[0].def;  // the widening is the accumulator itself now
      continue;
    }
    if (wide[id]) {
      TypeList types = node.types;
      types[0].dtype = DType::F32;
      new_id[id] =
          out.add_typed(node.op, std::move(ins), with_f32_out(node.attrs), std::move(types),
                        node.loc)
              .def;
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
