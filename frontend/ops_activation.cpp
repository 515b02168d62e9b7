// PyTorch's piecewise activations as compositions of rows: they differentiate, trace and fuse
// like user code. Each piece is chosen so that autograd's gradient is PyTorch's at the kinks, and
// a branch `where` does not select is computed on a clamped input, so that its gradient (zero,
// times the branch's slope there) cannot be 0 * inf.
#include <fmt/format.h>

#include "frontend/dispatch.h"
#include "lt/ops.h"

namespace lt {

namespace {

void check_float(const char* op, const Tensor& x, const Loc& loc) {
  if (!x.defined()) fail_op(op, "operand is an undefined tensor", {&x, 1}, loc);
  if (!is_float(x.dtype())) fail_op(op, "needs a float operand", {&x, 1}, loc);
}

/// x where it is not above `bound`, else `bound`: what a branch for the values up to `bound`
/// is computed on (the gradient reaches x only where x <= bound).
Tensor at_most(const Tensor& x, double bound, const Loc& loc) {
  const Tensor b = scalar_like(bound, x, loc);
  return where(gt(x, b, loc), b, x, loc);
}

}  // namespace

// The bounds are constants selected at the bounds themselves, so the gradient reaches x only
// strictly inside (PyTorch's hardtanh_backward); NaN passes through, as clamp passes it.
Tensor hardtanh(const Tensor& x, double min_val, double max_val, Loc loc) {
  check_float("hardtanh", x, loc);
  if (!(min_val <= max_val))
    fail_op("hardtanh", fmt::format("min_val {} is above max_val {}", min_val, max_val), {&x, 1},
            loc);
  const Tensor upper = where(ge(x, scalar_like(max_val, x, loc), loc), max_val, x, loc);
  return where(le(x, scalar_like(min_val, x, loc), loc), min_val, upper, loc);
}

Tensor relu6(const Tensor& x, Loc loc) {
  check_float("relu6", x, loc);
  return hardtanh(x, 0.0, 6.0, loc);
}

// x * clamp(x + 3, 0, 6) / 6, PyTorch's expression in its order of operations. clamp's
// gradient is 1 on [0, 6] inclusive, which makes the slope at -3 and 3 the middle piece's.
Tensor hardswish(const Tensor& x, Loc loc) {
  check_float("hardswish", x, loc);
  const Tensor r6 = clamp(add(x, scalar_like(3, x, loc), loc), 0.0, 6.0, loc);
  return div(mul(x, r6, loc), scalar_like(6, x, loc), loc);
}

// PyTorch's gradient is 1/6 strictly inside (-3, 3): the outer pieces are constants selected at
// the kinks themselves. Inside, (x + 3) / 6 is what clamp(x + 3, 0, 6) / 6 computes.
Tensor hardsigmoid(const Tensor& x, Loc loc) {
  check_float("hardsigmoid", x, loc);
  const Tensor middle = div(add(x, scalar_like(3, x, loc), loc), scalar_like(6, x, loc), loc);
  const Tensor upper = where(ge(x, scalar_like(3, x, loc), loc), 1.0, middle, loc);
  return where(le(x, scalar_like(-3, x, loc), loc), 0.0, upper, loc);
}

// expm1 where PyTorch 1.13 computes exp(x) - 1: the same function, without the cancellation
// that rounds elu(-1e-8) to 0 in f32.
Tensor elu(const Tensor& x, double alpha, Loc loc) {
  check_float("elu", x, loc);
  const Tensor negative = mul(expm1(at_most(x, 0, loc), loc), scalar_like(alpha, x, loc), loc);
  return where(gt(x, scalar_like(0, x, loc), loc), x, negative, loc);
}

// The switch is PyTorch's: x where beta x > threshold, the log form at the threshold itself.
Tensor softplus(const Tensor& x, double beta, double threshold, Loc loc) {
  check_float("softplus", x, loc);
  const Tensor bx = mul(x, scalar_like(beta, x, loc), loc);
  const Tensor soft =
      div(log1p(exp(at_most(bx, threshold, loc), loc), loc), scalar_like(beta, x, loc), loc);
  return where(gt(bx, scalar_like(threshold, x, loc), loc), x, soft, loc);
}

// PyTorch computes tanh(log1p(exp(x))) without a threshold; softplus's gives the same values
// (tanh is 1 in both past 20) and a finite gradient where exp(x) overflows.
Tensor mish(const Tensor& x, Loc loc) {
  check_float("mish", x, loc);
  return mul(x, tanh(softplus(x, 1.0, 20.0, loc), loc), loc);
}

}  // namespace lt
