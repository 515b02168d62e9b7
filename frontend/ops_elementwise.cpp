// Elementwise op functions and the operators.
#include <fmt/format.h>

#include <cmath>

#include "frontend/dispatch.h"
#include "frontend/promotion.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

#define LT_UNARY(fn, op)                                         \
  Tensor fn(const Tensor& x, Loc loc) {                          \
    return apply1_promoted(Op::op, {&x, 1}, ir::NoAttrs{}, loc); \
  }
LT_UNARY(neg, Neg)
LT_UNARY(abs, Abs)
LT_UNARY(exp, Exp)
LT_UNARY(expm1, Expm1)
LT_UNARY(log, Log)
LT_UNARY(log1p, Log1p)
LT_UNARY(sqrt, Sqrt)
LT_UNARY(rsqrt, Rsqrt)
LT_UNARY(tanh, Tanh)
LT_UNARY(sigmoid, Sigmoid)
LT_UNARY(relu, Relu)
LT_UNARY(sin, Sin)
LT_UNARY(cos, Cos)
LT_UNARY(reciprocal, Reciprocal)
LT_UNARY(erf, Erf)
LT_UNARY(isfinite, IsFinite)
LT_UNARY(bitwise_not, BitwiseNot)
#undef LT_UNARY

// Each form is one row: the exact one's gradient reads only x (a composition of erf and muls
// would keep three activation-sized intermediates for its backward instead).
Tensor gelu(const Tensor& x, std::string_view approximate, Loc loc) {
  if (approximate == "tanh") return apply1_promoted(Op::Gelu, {&x, 1}, ir::NoAttrs{}, loc);
  if (approximate != "none")
    fail_op("gelu", fmt::format("approximate must be \"none\" or \"tanh\", got \"{}\"",
                                approximate),
            {&x, 1}, loc);
  if (!x.defined()) fail_op("gelu", "operand is an undefined tensor", {&x, 1}, loc);
  return apply1_promoted(Op::GeluErf, {&x, 1}, ir::NoAttrs{}, loc);
}

// Compositions of rows: the loop fusion makes each one kernel, forward and backward.
Tensor silu(const Tensor& x, Loc loc) {
  if (!x.defined()) fail_op("silu", "operand is an undefined tensor", {&x, 1}, loc);
  // sigmoid would read an integer as a float; PyTorch's silu refuses it.
  if (!is_float(x.dtype())) fail_op("silu", "needs a float operand", {&x, 1}, loc);
  return mul(x, sigmoid(x, loc), loc);
}

Tensor leaky_relu(const Tensor& x, double negative_slope, Loc loc) {
  if (!x.defined()) fail_op("leaky_relu", "operand is an undefined tensor", {&x, 1}, loc);
  return where(gt(x, scalar_like(0, x, loc), loc), x,
               mul(x, scalar_like(negative_slope, x, loc), loc), loc);
}

Tensor cast(const Tensor& x, DType to, Loc loc) {
  return apply1(Op::Cast, {&x, 1}, ir::CastAttrs{to}, loc);
}

#define LT_BINARY(fn, op)                                                \
  Tensor fn(const Tensor& a, const Tensor& b, Loc loc) {                 \
    const Tensor in[] = {a, b};                                          \
    return apply1_promoted(Op::op, in, ir::NoAttrs{}, loc);              \
  }
LT_BINARY(add, Add)
LT_BINARY(sub, Sub)
LT_BINARY(mul, Mul)
LT_BINARY(div, Div)
LT_BINARY(pow, Pow)
LT_BINARY(maximum, Maximum)
LT_BINARY(minimum, Minimum)
LT_BINARY(remainder, Remainder)
LT_BINARY(floor_divide, FloorDivide)
LT_BINARY(fmod, Fmod)
LT_BINARY(eq, Eq)
LT_BINARY(ne, Ne)
LT_BINARY(lt, Lt)
LT_BINARY(le, Le)
LT_BINARY(gt, Gt)
LT_BINARY(ge, Ge)
LT_BINARY(bitwise_and, BitwiseAnd)
LT_BINARY(bitwise_or, BitwiseOr)
LT_BINARY(bitwise_xor, BitwiseXor)
#undef LT_BINARY

Tensor scalar_like(double v, const Tensor& like, Loc loc) {
  if (!like.defined()) fail_op("scalar", "operand is an undefined tensor", {}, loc);
  return scalar(v, like.dtype(), loc);
}

Tensor pow(const Tensor& a, Scalar b, Loc loc) {
  // PyTorch's check on the number alone (a tensor of negative exponents gives powi's values).
  if (a.defined() && !is_float(a.dtype()) && b.dtype() != DType::F64 && b.value() < 0)
    fail_op("pow", "Integers to negative integer powers are not allowed.", {&a, 1}, loc);
  return pow(a, wrap_number(b, a, loc), loc);
}
Tensor remainder(const Tensor& a, Scalar b, Loc loc) {
  return remainder(a, wrap_number(b, a, loc), loc);
}
Tensor floor_divide(const Tensor& a, Scalar b, Loc loc) {
  return floor_divide(a, wrap_number(b, a, loc), loc);
}
Tensor fmod(const Tensor& a, Scalar b, Loc loc) { return fmod(a, wrap_number(b, a, loc), loc); }
Tensor bitwise_and(const Tensor& a, Scalar b, Loc loc) {
  return bitwise_and(a, wrap_number(b, a, loc), loc);
}
Tensor bitwise_or(const Tensor& a, Scalar b, Loc loc) {
  return bitwise_or(a, wrap_number(b, a, loc), loc);
}
Tensor bitwise_xor(const Tensor& a, Scalar b, Loc loc) {
  return bitwise_xor(a, wrap_number(b, a, loc), loc);
}

namespace {
/// floor, ceil, round and trunc of integers are the integers (PyTorch's); of bool, PyTorch's
/// refusal.
Tensor rounding(Op op, const Tensor& x, const Loc& loc) {
  const std::string_view name = ir::mnemonic(op);
  if (!x.defined()) fail_op(name, "operand is an undefined tensor", {&x, 1}, loc);
  if (x.dtype() == DType::Bool) fail_op(name, "does not take bool operands", {&x, 1}, loc);
  if (is_integer(x.dtype())) return clone(x, loc);
  return apply1_promoted(op, {&x, 1}, ir::NoAttrs{}, loc);
}
}  // namespace

Tensor floor(const Tensor& x, Loc loc) { return rounding(Op::Floor, x, loc); }
Tensor ceil(const Tensor& x, Loc loc) { return rounding(Op::Ceil, x, loc); }
Tensor trunc(const Tensor& x, Loc loc) { return rounding(Op::Trunc, x, loc); }
Tensor round(const Tensor& x, int64_t decimals, Loc loc) {
  if (decimals == 0 || !x.defined() || !is_float(x.dtype())) return rounding(Op::Round, x, loc);
  // PyTorch's: round(x * 10^d) / 10^d, or for d < 0, round(x / 10^-d) * 10^-d.
  const double scale = std::pow(10.0, static_cast<double>(std::abs(decimals)));
  const Tensor s = scalar_like(scale, x, loc);
  return decimals > 0 ? div(rounding(Op::Round, mul(x, s, loc), loc), s, loc)
                      : mul(rounding(Op::Round, div(x, s, loc), loc), s, loc);
}

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b, Loc loc) {
  const Tensor in[] = {c, a, b};
  return apply1_promoted(Op::Where, in, ir::NoAttrs{}, loc);
}
Tensor where(const Tensor& c, const Tensor& a, Scalar b, Loc loc) {
  return where(c, a, wrap_number(b, a, loc), loc);
}
Tensor where(const Tensor& c, Scalar a, const Tensor& b, Loc loc) {
  return where(c, wrap_number(a, b, loc), b, loc);
}

// Two selects rather than maximum/minimum: the gradient is 1 on [min, max] inclusive and 0
// outside (PyTorch's), and min > max gives max everywhere (min first, then max, as PyTorch).
// x and the bounds take the dtype they promote to together (torch.result_type of all three).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max, Loc loc) {
  if (!min && !max) fail_op("clamp", "at least one of min and max must be given", {&x, 1}, loc);
  if (!x.defined()) fail_op("clamp", "operand is an undefined tensor", {&x, 1}, loc);
  DType dt = x.dtype();
  for (const std::optional<Scalar>& bound : {min, max})
    if (bound) dt = promote_types(dt, result_type(x, *bound));
  Tensor y = dt == x.dtype() ? x : cast(x, dt, loc);
  if (min) {
    const Tensor lo = scalar_like(min->value(), y, loc);
    y = where(lt(y, lo, loc), lo, y, loc);
  }
  if (max) {
    const Tensor hi = scalar_like(max->value(), y, loc);
    y = where(gt(y, hi, loc), hi, y, loc);
  }
  return y;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Loc loc) {
  const Tensor in[] = {x, mask};
  if (!x.defined() || !mask.defined())
    fail_op("masked_fill", "operand is an undefined tensor", in, loc);
  if (mask.dtype() != DType::Bool)
    fail_op("masked_fill", fmt::format("mask must be bool, got {}", type_str(mask.type())), in,
            loc);
  return where(mask, scalar_like(value, x, loc), x, loc);  // x's dtype, as PyTorch's
}

Tensor operator-(At x) { return neg(x.t, x.loc); }
Tensor operator+(At a, const Tensor& b) { return add(a.t, b, a.loc); }
Tensor operator-(At a, const Tensor& b) { return sub(a.t, b, a.loc); }
Tensor operator*(At a, const Tensor& b) { return mul(a.t, b, a.loc); }
Tensor operator/(At a, const Tensor& b) { return div(a.t, b, a.loc); }
Tensor operator+(At a, Scalar b) { return add(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator-(At a, Scalar b) { return sub(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator*(At a, Scalar b) { return mul(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator/(At a, Scalar b) { return div(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator+(Scalar a, At b) { return add(wrap_number(a, b.t, b.loc), b.t, b.loc); }
Tensor operator-(Scalar a, At b) { return sub(wrap_number(a, b.t, b.loc), b.t, b.loc); }
Tensor operator*(Scalar a, At b) { return mul(wrap_number(a, b.t, b.loc), b.t, b.loc); }
Tensor operator/(Scalar a, At b) { return div(wrap_number(a, b.t, b.loc), b.t, b.loc); }
Tensor operator~(At x) { return bitwise_not(x.t, x.loc); }
Tensor operator&(At a, const Tensor& b) { return bitwise_and(a.t, b, a.loc); }
Tensor operator|(At a, const Tensor& b) { return bitwise_or(a.t, b, a.loc); }
Tensor operator^(At a, const Tensor& b) { return bitwise_xor(a.t, b, a.loc); }
Tensor operator&(At a, Scalar b) { return bitwise_and(a.t, b, a.loc); }
Tensor operator|(At a, Scalar b) { return bitwise_or(a.t, b, a.loc); }
Tensor operator^(At a, Scalar b) { return bitwise_xor(a.t, b, a.loc); }
Tensor operator<(At a, const Tensor& b) { return lt(a.t, b, a.loc); }
Tensor operator<=(At a, const Tensor& b) { return le(a.t, b, a.loc); }
Tensor operator>(At a, const Tensor& b) { return gt(a.t, b, a.loc); }
Tensor operator>=(At a, const Tensor& b) { return ge(a.t, b, a.loc); }
Tensor operator<(At a, Scalar b) { return lt(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator<=(At a, Scalar b) { return le(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator>(At a, Scalar b) { return gt(a.t, wrap_number(b, a.t, a.loc), a.loc); }
Tensor operator>=(At a, Scalar b) { return ge(a.t, wrap_number(b, a.t, a.loc), a.loc); }

}  // namespace lt
