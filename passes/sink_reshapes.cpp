#include "passes/sink_reshapes.h"

#include <vector>

#include "ir/op.h"
#include "passes/rewrite.h"

namespace lt::passes {
namespace {

using ir::Graph;
using ir::Value;
using Result = std::optional<Value>;

// op(reshape(x), reshape(y), c) -> reshape(op(x, y, c)) when x and y have one shape, the
// reshapes give the result's shape (no operand broadcasts through them) and c has one element
// and no more dims than x (it broadcasts alike in both shapes).
Result sink_below_elementwise(const Graph& g, int id, RewriteBuilder& b) {
  const ir::Node& n = g.node(id);
  const Shape& shape = n.types[0].shape;
  auto reshaped = [&](Value v) -> const ir::Node* {
    const ir::Node* p = producer(g, v);
    return p && p->op == ir::Op::Reshape && g.type(v).shape == shape ? p : nullptr;
  };
  const Shape* from = nullptr;
  for (Value v : n.inputs)
    if (const ir::Node* p = reshaped(v)) {
      const Shape& s = g.type(p->inputs[0]).shape;
      if (from && *from != s) return std::nullopt;
      from = &s;
    }
  if (!from || *from == shape) return std::nullopt;
  std::vector<Value> ins;
  for (Value v : n.inputs) {
    if (const ir::Node* p = reshaped(v)) {
      ins.push_back(p->inputs[0]);
      continue;
    }
    const TensorType& t = g.type(v);
    if (t.numel() != 1 || t.shape.size() > from->size()) return std::nullopt;
    ins.push_back(v);
  }
  const Value y = b.add(n.op, std::move(ins), n.attrs);
  return b.add(ir::Op::Reshape, {y}, ir::ReshapeAttrs{shape});
}

const RewriteRule kRules[] = {
#define LT_OP(name, ...) {ir::Op::name, sink_below_elementwise},
#include "ir/ops/elementwise.def"
#undef LT_OP
    {ir::Op::Reshape, view_of_same_view},
};

}  // namespace

bool sink_reshapes(ir::Graph& g) { return rewrite_to_fixpoint(g, kRules); }

}  // namespace lt::passes
