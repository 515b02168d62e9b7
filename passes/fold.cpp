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

// Whether the op leaves int64 (or divides by zero) on these operands: ir::scalar wraps there, as
// the kernels do in the operands' width, which int64 does not tell.
bool overflows(ElementwiseOp op, std::span<const int64_t> x) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t a = x[0], b = x.size() > 1 ? x[1] : 0;
  int64_t r = 0;
  if (op == Neg || op == Abs) return a == kMin;
  if (op == Add) return __builtin_add_overflow(a, b, &r);
  if (op == Sub) return __builtin_sub_overflow(a, b, &r);
  if (op == Mul) return __builtin_mul_overflow(a, b, &r);
  if (op == Div || op == FloorDivide) return b == 0 || (a == kMin && b == -1);
  if (op == Remainder || op == Fmod) return b == 0;
  if (op == Pow) {
    int64_t base = a;
    r = 1;
    for (int64_t e = b; e > 0; e >>= 1) {
      if ((e & 1) && __builtin_mul_overflow(r, base, &r)) return true;
      if (e > 1 && __builtin_mul_overflow(base, base, &base)) return true;
    }
  }
  return false;
}

// Integer and bool operands, exact in int64; overflow and division by zero stay unfolded (the
// kernels wrap or throw there, in the operands' width). Float-only rows (by their operand column)
// do not fold here.
std::optional<int64_t> eval_int(ElementwiseOp op, std::span<const int64_t> x) {
  if (overflows(op, x)) return std::nullopt;
  return ir::scalar::evaluate<int64_t>(op, x);
}

// Float operands are computed in double. Rounding to f32 afterwards gives the correctly rounded
// f32 result for + - * / and sqrt (double has more than 2*24+2 bits), as the kernels compute it.
std::optional<double> eval(ElementwiseOp op, DType operands, std::span<const double> x) {
  if (is_float(operands)) return ir::scalar::evaluate<double>(op, x);
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
