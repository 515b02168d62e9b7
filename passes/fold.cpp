#include "passes/fold.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "passes/rewrite.h"

namespace lt::passes {
namespace {

using ir::ElementwiseOp;
using ir::Graph;
using ir::Value;
using enum ir::ElementwiseOp;
using Result = std::optional<Value>;

// Integers a full can hold exactly: its value is a double.
constexpr int64_t kMaxExactInt = int64_t{1} << 53;

// Float operands, computed in double. Rounding to f32 afterwards gives the correctly rounded f32
// result for + - * / and sqrt (double has more than 2*24+2 bits), as the kernels compute it.
std::optional<double> eval_float(ElementwiseOp op, std::span<const double> x) {
  const double a = x[0], b = x.size() > 1 ? x[1] : 0.0;
  switch (op) {
    case Neg: return -a;
    case Abs: return a < 0 ? -a : a;  // the kernels' form: abs(-0.0) stays -0.0
    case Exp: return std::exp(a);
    case Log: return std::log(a);
    case Sqrt: return std::sqrt(a);
    case Rsqrt: return 1.0 / std::sqrt(a);
    case Tanh: return std::tanh(a);
    case Sigmoid: return 1.0 / (1.0 + std::exp(-a));
    case Relu: return a > 0 ? a : 0.0;  // relu(NaN) = 0, as the kernels compute it
    case Gelu: return 0.5 * a * (1.0 + std::tanh(0.7978845608028654 * (a + 0.044715 * a * a * a)));
    case Sin: return std::sin(a);
    case Cos: return std::cos(a);
    case Reciprocal: return 1.0 / a;
    case IsFinite: return std::isfinite(a) ? 1.0 : 0.0;
    case Cast: return a;  // the caller converts to the result dtype
    case Add: return a + b;
    case Sub: return a - b;
    case Mul: return a * b;
    case Div: return a / b;
    case Pow: return std::pow(a, b);
    case Maximum: return (a > b || a != a) ? a : b;  // NaN-propagating, kernels' tie order
    case Minimum: return (a < b || a != a) ? a : b;
    case Eq: return a == b ? 1.0 : 0.0;
    case Ne: return a != b ? 1.0 : 0.0;
    case Lt: return a < b ? 1.0 : 0.0;
    case Le: return a <= b ? 1.0 : 0.0;
    case Gt: return a > b ? 1.0 : 0.0;
    case Ge: return a >= b ? 1.0 : 0.0;
    case Where: return a != 0 ? b : x[2];
  }
  return std::nullopt;
}

// Integer and bool operands, exact in int64; overflow and division by zero stay unfolded.
std::optional<int64_t> eval_int(ElementwiseOp op, std::span<const int64_t> x) {
  const int64_t a = x[0], b = x.size() > 1 ? x[1] : 0;
  int64_t r = 0;
  switch (op) {
    case Neg: return __builtin_sub_overflow(int64_t{0}, a, &r) ? std::nullopt : std::optional(r);
    case Abs:
      if (a >= 0) return a;
      return __builtin_sub_overflow(int64_t{0}, a, &r) ? std::nullopt : std::optional(r);
    case Relu: return a > 0 ? a : 0;
    case IsFinite: return 1;
    case Cast: return a;
    case Add: return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Sub: return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Mul: return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Div:  // C++ division truncates toward zero, as the kernels do
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return a / b;
    case Maximum: return a > b ? a : b;
    case Minimum: return a < b ? a : b;
    case Eq: return a == b;
    case Ne: return a != b;
    case Lt: return a < b;
    case Le: return a <= b;
    case Gt: return a > b;
    case Ge: return a >= b;
    case Where: return a != 0 ? b : x[2];
    case Exp: case Log: case Sqrt: case Rsqrt: case Tanh: case Sigmoid: case Gelu: case Sin:
    case Cos: case Reciprocal: case Pow:
      return std::nullopt;  // float only: the type rule rejects integer operands
  }
  return std::nullopt;
}

std::optional<double> eval(ElementwiseOp op, DType operands, std::span<const double> x) {
  if (is_float(operands)) return eval_float(op, x);
  std::array<int64_t, 3> xi{};
  for (size_t i = 0; i < x.size(); ++i) xi[i] = static_cast<int64_t>(x[i]);  // exact integers
  const std::optional<int64_t> r = eval_int(op, std::span(xi.data(), x.size()));
  if (!r || *r > kMaxExactInt || *r < -kMaxExactInt) return std::nullopt;
  return static_cast<double>(*r);
}

Result fold_elementwise(const Graph& g, int id, RewriteBuilder& b) {
  const ir::Node& n = g.node(id);
  const ElementwiseOp op = *ir::as_elementwise(n.op);
  std::array<double, 3> x{};
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const std::optional<double> s = splat_value(g, n.inputs[i]);
    if (!s) return std::nullopt;
    x[i] = *s;
  }
  // Operand dtype: where's branches; for every other op all operands share one dtype.
  const DType operands = g.type(n.inputs[op == Where ? 1 : 0]).dtype;
  const TensorType& out = n.types[0];
  if (!is_compute_type(operands) || !is_compute_type(out.dtype)) return std::nullopt;
  const std::optional<double> r = eval(op, operands, std::span(x.data(), n.inputs.size()));
  if (!r) return std::nullopt;
  const std::optional<double> v = to_dtype(*r, out.dtype);
  if (!v || (is_integer(out.dtype) && std::abs(*v) > static_cast<double>(kMaxExactInt)))
    return std::nullopt;
  return b.add(ir::Op::Full, {}, ir::FullAttrs{out.shape, out.dtype, *v});
}

// A view of a splat is the same splat in the view's shape.
Result fold_view(const Graph& g, int id, RewriteBuilder& b) {
  const ir::Node& n = g.node(id);
  const ir::Node* p = producer(g, n.inputs[0]);
  if (!p || p->op != ir::Op::Full) return std::nullopt;
  ir::FullAttrs a = std::get<ir::FullAttrs>(p->attrs);
  a.shape = n.types[0].shape;
  return b.add(ir::Op::Full, {}, std::move(a));
}

const RewriteRule kRules[] = {
#define LT_OP(name, ...) {ir::Op::name, fold_elementwise},
#include "ir/ops/elementwise.def"
#undef LT_OP
    {ir::Op::Reshape, fold_view},
    {ir::Op::Expand, fold_view},
    {ir::Op::Permute, fold_view},
    {ir::Op::Slice, fold_view},
};

}  // namespace

bool fold(ir::Graph& g) { return rewrite_to_fixpoint(g, kRules); }

}  // namespace lt::passes
