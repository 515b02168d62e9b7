#include "passes/fold.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/elementwise_scalar.h"
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
  namespace S = ir::scalar;
  const double a = x[0], b = x.size() > 1 ? x[1] : 0.0;
  switch (op) {
    case Neg: return S::neg(a);
    case Abs: return S::abs(a);
    case Exp: return S::exp(a);
    case Log: return S::log(a);
    case Sqrt: return S::sqrt(a);
    case Rsqrt: return S::rsqrt(a);
    case Tanh: return S::tanh(a);
    case Sigmoid: return S::sigmoid(a);
    case Relu: return S::relu(a);
    case Gelu: return S::gelu(a);
    case Sin: return S::sin(a);
    case Cos: return S::cos(a);
    case Reciprocal: return S::reciprocal(a);
    case Erf: return S::erf(a);
    case GeluErf: return S::gelu_erf(a);
    case GeluErfGrad: return S::gelu_erf_grad(a);
    case IsFinite: return S::isfinite(a);
    case Cast: return a;  // the caller converts to the result dtype
    case Add: return S::add(a, b);
    case Sub: return S::sub(a, b);
    case Mul: return S::mul(a, b);
    case Div: return S::div(a, b);
    case Pow: return S::pow(a, b);
    case Maximum: return S::maximum(a, b);
    case Minimum: return S::minimum(a, b);
    case Eq: return S::eq(a, b);
    case Ne: return S::ne(a, b);
    case Lt: return S::lt(a, b);
    case Le: return S::le(a, b);
    case Gt: return S::gt(a, b);
    case Ge: return S::ge(a, b);
    case Where: return S::where(a != 0, b, x[2]);
  }
  return std::nullopt;
}

// Integer and bool operands, exact in int64; overflow and division by zero stay unfolded (the
// kernels wrap or throw there, in the operands' width).
std::optional<int64_t> eval_int(ElementwiseOp op, std::span<const int64_t> x) {
  namespace S = ir::scalar;
  const int64_t a = x[0], b = x.size() > 1 ? x[1] : 0;
  int64_t r = 0;
  switch (op) {
    case Neg: return __builtin_sub_overflow(int64_t{0}, a, &r) ? std::nullopt : std::optional(r);
    case Abs:
      if (a >= 0) return a;
      return __builtin_sub_overflow(int64_t{0}, a, &r) ? std::nullopt : std::optional(r);
    case Relu: return S::relu(a);
    case IsFinite: return S::isfinite(a);
    case Cast: return a;
    case Add: return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Sub: return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Mul: return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case Div:
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return S::div(a, b);
    case Maximum: return S::maximum(a, b);
    case Minimum: return S::minimum(a, b);
    case Eq: return S::eq(a, b);
    case Ne: return S::ne(a, b);
    case Lt: return S::lt(a, b);
    case Le: return S::le(a, b);
    case Gt: return S::gt(a, b);
    case Ge: return S::ge(a, b);
    case Where: return S::where(a != 0, b, x[2]);
    case Exp: case Log: case Sqrt: case Rsqrt: case Tanh: case Sigmoid: case Gelu: case Sin:
    case Cos: case Reciprocal: case Erf: case GeluErf: case GeluErfGrad: case Pow:
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
  const DType operands = g.type(n.inputs[ir::data_operand(n.op)]).dtype;
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
  if (!keeps_splats(n.op) || !p || p->op != ir::Op::Full) return std::nullopt;
  ir::FullAttrs a = std::get<ir::FullAttrs>(p->attrs);
  a.shape = n.types[0].shape;
  return b.add(ir::Op::Full, {}, std::move(a));
}

const RewriteRule kRules[] = {
#define LT_OP(name, ...) {ir::Op::name, fold_elementwise},
#include "ir/ops/elementwise.def"
#undef LT_OP
#define LT_OP(name, ...) {ir::Op::name, fold_view},
#include "ir/ops/view.def"
#undef LT_OP
};

}  // namespace

bool fold(ir::Graph& g) { return rewrite_to_fixpoint(g, kRules); }

}  // namespace lt::passes
