// Samples of the elementwise family, by each row's columns: each unary row on its smooth domain
// (integers too where its operand column takes them), binary rows under the broadcasting patterns
// that matter for sum_to (trailing 1s, new leading dims, a scalar side). A row whose domain is
// not all of [-2, 2] says so in unary_input.
#include <cmath>
#include <limits>

#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {
namespace {

using enum ir::ElementwiseOp;

/// An input for a unary op, inside the op's domain and away from its kinks: U[-2, 2) unless the
/// op is here.
Tensor unary_input(ir::ElementwiseOp op, Rng& r, Shape s) {
  switch (op) {
    case Abs: case Relu: return away_from_zero(r, std::move(s), 0.1, 2);
    case Log: case Sqrt: case Rsqrt: return uniform(r, std::move(s), 0.3, 3);
    case Log1p: return uniform(r, std::move(s), -0.7, 3);
    case Reciprocal: return away_from_zero(r, std::move(s), 0.5, 2);
    default: return uniform(r, std::move(s), -2, 2);
  }
}

/// (a, b) for a binary op on shapes sa and sb.
std::vector<Tensor> binary_inputs(ir::ElementwiseOp op, Rng& r, const Shape& sa, const Shape& sb) {
  switch (op) {
    case Div: case Remainder: case FloorDivide: case Fmod:
      return {uniform(r, sa), away_from_zero(r, sb, 0.5, 2)};
    case Pow: return {uniform(r, sa, 0.5, 2), uniform(r, sb, -2, 2)};
    case Maximum: case Minimum: return distinct(r, {sa, sb});
    default: return {uniform(r, sa), uniform(r, sb)};
  }
}

/// Values with exact ties (and exactly representable in f32), for comparisons.
Tensor tie_values(Rng& r, Shape s) {
  std::vector<double> v(numel(s));
  for (double& x : v) x = 0.5 * static_cast<double>(r.below(5) - 2);
  return f64(std::move(v), std::move(s));
}

std::vector<OpSample> cast_samples(Rng& r) {
  const ir::Op op = ir::Op::Cast;
  std::vector<OpSample> out;
  OpSample narrow = make(op, "f64 -> f32", {uniform(r, {3, 4})}, ir::CastAttrs{DType::F32});
  narrow.eps = 1e-2;  // linear: a large step only shrinks f32 rounding in the difference quotient
  narrow.atol = 1e-4;
  out.push_back(std::move(narrow));
  out.push_back(make(op, "f64 -> f64", {uniform(r, {2, 3})}, ir::CastAttrs{DType::F64}));
  // Fractional parts in [0.2, 0.8]: truncation is locally constant, so the gradient must be 0.
  std::vector<double> v(6);
  for (double& x : v)
    x = (static_cast<double>(r.below(5)) + r.uniform(0.2, 0.8)) * (r.below(2) ? 1 : -1);
  out.push_back(make(op, "f64 -> i64 truncates (zero gradient)", {f64(v, {2, 3})},
                     ir::CastAttrs{DType::I64}));
  out.push_back(make(op, "i64 -> f64", {ids(r, {2, 3}, 7)}, ir::CastAttrs{DType::F64}));
  OpSample to_bool = make(op, "f64 -> bool", {f64({0, 1.5, -2, 0, 0.25, -0.0}, {2, 3})},
                          ir::CastAttrs{DType::Bool});
  to_bool.differentiable = {false};  // zeros sit on the step: forward checks only
  out.push_back(std::move(to_bool));
  // To a storage type; values bf16 holds exactly, so f64 and f32 sources agree.
  OpSample to_bf16 = make(op, "f64 -> bf16", {f64({0.5, -1.25, 3, 0, 96, -0.0078125}, {2, 3})},
                          ir::CastAttrs{DType::BF16});
  to_bf16.differentiable = {false};  // a step function at bf16's resolution
  out.push_back(std::move(to_bf16));
  return out;
}

std::vector<OpSample> where_samples(Rng& r) {
  const ir::Op op = ir::Op::Where;
  return {
      make(op, "cond [2,3], a [2,3], b [3]",
           {bools(r, {2, 3}), uniform(r, {2, 3}), uniform(r, {3})}),
      make(op, "cond [3] broadcast with a [2,1], b scalar",
           {bools(r, {3}), uniform(r, {2, 1}), uniform(r, {})}),
  };
}

/// Integer inputs, where the row's operand column takes them.
bool takes_integers(ir::Op op) { return ir::takes_integers(ir::info(op).operands); }

std::vector<OpSample> unary_samples(ir::ElementwiseOp e, Rng& r) {
  const ir::Op op = ir::to_op(e);
  std::vector<OpSample> out = {
      make(op, "[3,4]", {unary_input(e, r, {3, 4})}),
      make(op, "scalar", {unary_input(e, r, {})}),
      make(op, "[2,1,3]", {unary_input(e, r, {2, 1, 3})}),
      make(op, "large [131,257] (threads, vector tails)", {unary_input(e, r, {131, 257})})};
  if (takes_integers(op)) {
    out.push_back(make(op, "i64 [2,3]", {i64({-7, 5, 0, 9, -3, 4}, {2, 3})}));
    out.push_back(make(op, "i32 [5]", {cast(i64({-3, 0, 7, -1, 2}, {5}), DType::I32)}));
  }
  return out;
}

/// A unary test of a value (isfinite): finite values, infinities and NaN.
std::vector<OpSample> predicate_samples(ir::Op op) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<OpSample> out = {
      make(op, "finite, inf, -inf, nan", {f64({1, inf, -inf, std::nan(""), -0.5, 1e10}, {2, 3})})};
  if (takes_integers(op))
    out.push_back(make(op, "i64 [3] (always finite)", {i64({-1, 0, 5}, {3})}));
  return out;
}

std::vector<OpSample> binary_samples(ir::ElementwiseOp e, Rng& r) {
  const ir::Op op = ir::to_op(e);
  std::vector<OpSample> out = {
      make(op, "same shape [2,3]", binary_inputs(e, r, {2, 3}, {2, 3})),
      make(op, "broadcast [2,3,4] with [3,1]", binary_inputs(e, r, {2, 3, 4}, {3, 1})),
      make(op, "broadcast [3] with [2,3]", binary_inputs(e, r, {3}, {2, 3})),
      make(op, "broadcast scalar with [2,2]", binary_inputs(e, r, {}, {2, 2})),
      make(op, "broadcast [2,3] with scalar", binary_inputs(e, r, {2, 3}, {})),
      make(op, "both sides broadcast [4,1,5] with [1,3,1]",
           binary_inputs(e, r, {4, 1, 5}, {1, 3, 1})),
      make(op, "large [37,1,65] with [33,1] (threads, vector tails)",
           binary_inputs(e, r, {37, 1, 65}, {33, 1})),
  };
  if (takes_integers(op)) {
    out.push_back(make(op, "i64 broadcast [2,3] with [3]",
                       {i64({-7, 5, 0, 9, -3, 4}, {2, 3}), i64({2, -3, 4}, {3})}));
    out.push_back(make(op, "i32 broadcast [4,1] with [1,5]",
                       {cast(i64({-9, 7, 0, 100}, {4, 1}), DType::I32),
                        cast(i64({3, -2, 5, -7, 1}, {1, 5}), DType::I32)}));
  }
  if (e == Pow) {  // a negative base is defined for integer exponents (held fixed)
    OpSample neg = make(op, "negative base, integer exponents [2,3] with [3]",
                        {uniform(r, {2, 3}, -2, -0.5), f64({2, 3, -1}, {3})});
    neg.differentiable = {true, false};
    out.push_back(std::move(neg));
  }
  return out;
}

std::vector<OpSample> compare_samples(ir::Op op, Rng& r) {
  std::vector<OpSample> out = {
      make(op, "f64 with ties, [2,3] with [3]", {tie_values(r, {2, 3}), tie_values(r, {3})}),
      make(op, "i64 [2,3] with scalar", {ids(r, {2, 3}, 4), i64({2}, {})}),
  };
  if (ir::takes_bool(ir::info(op).operands)) {
    Tensor a = bools(r, {4}), b = bools(r, {4});
    out.push_back(make(op, "bool [4]", {a, b}));
  }
  return out;
}

/// The bitwise rows (integers and bool only): negative integers (two's complement), i32 and i64,
/// broadcasting, a scalar side, bool.
std::vector<OpSample> bitwise_samples(ir::Op op, Rng& r) {
  const bool unary = ir::info(op).arity == 1;
  const auto in = [&](std::vector<Tensor> both) {
    if (unary) both.resize(1);
    return both;
  };
  const Tensor a = i64({-7, 5, 0, 9, -3, 4, -1, 12}, {2, 4});
  std::vector<OpSample> out = {
      make(op, "i64 [2,4] with [4]", in({a, i64({3, -2, 6, -8}, {4})})),
      make(op, "i64 scalar with [2,4]", in({i64({-6}, {}), a})),
      make(op, "i32 [4,1] with [1,3]", in({cast(i64({-9, 7, 0, 100}, {4, 1}), DType::I32),
                                           cast(i64({3, -2, 5}, {1, 3}), DType::I32)})),
      make(op, "i64 large [37,65] with [65] (threads, vector tails)",
           in({ids(r, {37, 65}, 1000), ids(r, {65}, 1000)})),
      make(op, "bool [3,4] with [4]", in({bools(r, {3, 4}), bools(r, {4})})),
  };
  for (OpSample& s : out) s.differentiable.assign(s.inputs.size(), false);
  return out;
}

}  // namespace

std::vector<OpSample> elementwise_samples(ir::Op op, Rng& r) {
  const ir::ElementwiseOp e = *ir::as_elementwise(op);
  const ir::OpInfo& row = ir::info(op);
  if (row.result == ir::ResultKind::Attr) return cast_samples(r);
  if (row.operands == ir::OperandKind::Select) return where_samples(r);
  if (row.operands == ir::OperandKind::Integral) return bitwise_samples(op, r);
  if (row.arity == 1 && row.result == ir::ResultKind::Bool) return predicate_samples(op);
  if (row.arity == 1) return unary_samples(e, r);
  if (row.result == ir::ResultKind::Bool) return compare_samples(op, r);
  return binary_samples(e, r);
}

}  // namespace lt::testing::samples
