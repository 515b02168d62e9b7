#include "passes/canonicalize.h"

#include <cmath>

#include "passes/rewrite.h"

namespace lt::passes {
namespace {

using ir::Graph;
using ir::Value;
using Result = std::optional<Value>;

bool is_splat(const Graph& g, Value v, double c) {
  const std::optional<double> s = splat_value(g, v);
  return s && *s == c;
}

// A zero z with x + z == x for every x: -0.0 for floats (+0.0 would turn x = -0.0 into +0.0),
// any zero for integers.
bool is_additive_identity(const Graph& g, Value v) {
  const std::optional<double> s = splat_value(g, v);
  return s && *s == 0 && (!is_float(g.type(v).dtype) || std::signbit(*s));
}

// A zero z with x - z == x for every x: +0.0 for floats (x - (-0.0) is x + 0.0), any zero for
// integers.
bool is_subtractive_identity(const Graph& g, Value v) {
  const std::optional<double> s = splat_value(g, v);
  return s && *s == 0 && (!is_float(g.type(v).dtype) || !std::signbit(*s));
}

// The operand `keep` may stand for the node only if it already has the result's type: otherwise
// the constant broadcasts it, and x * ones([4,8]) with x: f32[8] is an expand, not x.
Result keep_if(const Graph& g, int id, int keep, bool other_is_identity) {
  const ir::Node& n = g.node(id);
  if (other_is_identity && g.type(n.inputs[keep]) == n.types[0]) return n.inputs[keep];
  return std::nullopt;
}

Result mul_by_one(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  if (Result r = keep_if(g, id, 0, is_splat(g, n.inputs[1], 1.0))) return r;
  return keep_if(g, id, 1, is_splat(g, n.inputs[0], 1.0));
}

Result add_zero(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  if (Result r = keep_if(g, id, 0, is_additive_identity(g, n.inputs[1]))) return r;
  return keep_if(g, id, 1, is_additive_identity(g, n.inputs[0]));
}

Result sub_zero(const Graph& g, int id, RewriteBuilder&) {
  return keep_if(g, id, 0, is_subtractive_identity(g, g.node(id).inputs[1]));
}

Result div_by_one(const Graph& g, int id, RewriteBuilder&) {
  return keep_if(g, id, 0, is_splat(g, g.node(id).inputs[1], 1.0));
}

Result neg_of_neg(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node* p = producer(g, g.node(id).inputs[0]);
  if (p && p->op == ir::Op::Neg) return p->inputs[0];
  return std::nullopt;
}

// The operand when the node has its type already: a reshape, expand or cast that changes nothing.
Result same_type(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  if (g.type(n.inputs[0]) == n.types[0]) return n.inputs[0];
  return std::nullopt;
}

bool is_identity(const ir::Ints& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Result identity_permute(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  if (is_identity(std::get<ir::PermuteAttrs>(n.attrs).perm)) return n.inputs[0];
  return std::nullopt;
}

// out.dim[i] = in.dim[perm[i]], so permute(permute(x, p), q) = permute(x, c) with c[i] = p[q[i]].
Result permute_of_permute(const Graph& g, int id, RewriteBuilder& b) {
  const ir::Node& n = g.node(id);
  const ir::Node* p = producer(g, n.inputs[0]);
  if (!p || p->op != ir::Op::Permute) return std::nullopt;
  const ir::Ints& inner = std::get<ir::PermuteAttrs>(p->attrs).perm;
  const ir::Ints& outer = std::get<ir::PermuteAttrs>(n.attrs).perm;
  ir::Ints c(outer.size());
  for (size_t i = 0; i < outer.size(); ++i) c[i] = inner[outer[i]];
  if (is_identity(c)) return p->inputs[0];
  return b.add(ir::Op::Permute, {p->inputs[0]}, ir::PermuteAttrs{c});
}

// from -> to keeps every value of `from`, so casting back recovers it bit for bit.
bool is_exact_cast(DType from, DType to) {
  using enum DType;
  switch (from) {
    case Bool: return true;
    case I32: return to == I32 || to == I64 || to == F64;
    case F16: case BF16: return to == from || to == F32 || to == F64;
    case F32: return to == F32 || to == F64;
    case I64: case F64: return to == from;
  }
  return false;
}

Result cast_of_exact_cast(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  const ir::Node* p = producer(g, n.inputs[0]);
  if (!p || p->op != ir::Op::Cast) return std::nullopt;
  const Value x = p->inputs[0];
  if (g.type(x) == n.types[0] && is_exact_cast(g.type(x).dtype, p->types[0].dtype)) return x;
  return std::nullopt;
}

// Start 0 and an unchanged shape: every step is 1 or the axis has at most one element.
Result full_slice(const Graph& g, int id, RewriteBuilder&) {
  const ir::Node& n = g.node(id);
  for (int64_t s : std::get<ir::SliceAttrs>(n.attrs).start)
    if (s != 0) return std::nullopt;
  if (g.type(n.inputs[0]) == n.types[0]) return n.inputs[0];
  return std::nullopt;
}

const RewriteRule kRules[] = {
    {ir::Op::Mul, mul_by_one},
    {ir::Op::Add, add_zero},
    {ir::Op::Sub, sub_zero},
    {ir::Op::Div, div_by_one},
    {ir::Op::Neg, neg_of_neg},
    {ir::Op::Reshape, same_type},
    {ir::Op::Reshape, view_of_same_view},
    {ir::Op::Permute, identity_permute},
    {ir::Op::Permute, permute_of_permute},
    {ir::Op::Expand, same_type},
    {ir::Op::Expand, view_of_same_view},
    {ir::Op::Cast, same_type},
    {ir::Op::Cast, cast_of_exact_cast},
    {ir::Op::Slice, full_slice},
};

}  // namespace

bool canonicalize(ir::Graph& g) { return rewrite_to_fixpoint(g, kRules); }

}  // namespace lt::passes
