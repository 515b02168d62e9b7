#include "passes/absorb_widening_casts.h"

#include <optional>
#include <utility>
#include <vector>

#include "ir/op.h"
#include "passes/graph_copy.h"

namespace lt::passes {
namespace {

bool narrow_float(DType t) { return t == DType::BF16 || t == DType::F16; }

/// The narrow value v widens exactly, when v = cast(x) {to=f32} with x f16 or bf16.
std::optional<ir::Value> widened_from(const ir::Graph& g, ir::Value v) {
  if (v.is_param() || g.node(v.def).op != ir::Op::Cast) return std::nullopt;
  const ir::Node& cast = g.node(v.def);
  if (g.type(v).dtype != DType::F32 || !narrow_float(g.type(cast.inputs[0]).dtype))
    return std::nullopt;
  return cast.inputs[0];
}

}  // namespace

bool absorb_widening_casts(ir::Graph& g) {
  std::vector<std::pair<int, ir::Value>> absorbed;  // (node, its new first operand)
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    if (ir::info(n.op).operands != ir::OperandKind::FloatWidensFirst) continue;
    if (const auto x = widened_from(g, n.inputs[0])) absorbed.emplace_back(id, *x);
  }
  if (absorbed.empty()) return false;
  // Only operands change: node ids, types and every other edge stay as they are.
  ir::Graph out = empty_copy(g);
  size_t next = 0;
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    std::vector<ir::Value> ins = n.inputs;
    if (next < absorbed.size() && absorbed[next].first == id) ins[0] = absorbed[next++].second;
    out.add_typed(n.op, std::move(ins), n.attrs, n.types, n.loc);
  }
  replace_graph(g, std::move(out), {g.results().begin(), g.results().end()});
  return true;
}

}  // namespace lt::passes
