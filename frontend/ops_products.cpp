// Products and log-sum compositions PyTorch users write in attention and bilinear layers:
// outer, baddbmm, logaddexp. Each is made of rows, so gradients and lazy mode come with them.
#include <fmt/format.h>

#include "frontend/dispatch.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

Tensor outer(const Tensor& a, const Tensor& b, Loc loc) {
  const Tensor both[] = {a, b};
  need_defined(both, "outer", loc);
  if (a.rank() != 1)
    fail_op("outer", fmt::format("Expected 1-D argument self, but got {}-D", a.rank()), both, loc);
  if (b.rank() != 1)
    fail_op("outer", fmt::format("Expected 1-D argument vec2, but got {}-D", b.rank()), both, loc);
  return mul(unsqueeze(a, 1, loc), unsqueeze(b, 0, loc), loc);
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta,
               double alpha, Loc loc) {
  const Tensor all[] = {input, batch1, batch2};
  need_defined(all, "baddbmm", loc);
  if (batch1.rank() != 3) fail_op("baddbmm", "batch1 must be a 3D tensor", all, loc);
  if (batch2.rank() != 3) fail_op("baddbmm", "batch2 must be a 3D tensor", all, loc);
  const int64_t n = batch1.size(0), m = batch1.size(1), k = batch1.size(2);
  if (batch2.size(0) != n || batch2.size(1) != k)
    fail_op("baddbmm",
            fmt::format("Expected size for first two dimensions of batch2 tensor to be: [{}, {}] "
                        "but got: [{}, {}].",
                        n, k, batch2.size(0), batch2.size(1)),
            all, loc);
  (void)m;
  Tensor product = matmul(batch1, batch2, loc);
  if (alpha != 1) product = mul(product, scalar_like(alpha, product, loc), loc);
  // beta = 0 ignores input, NaN and inf included, as PyTorch's.
  if (beta == 0) return add(product, zeros_like(expand(input, product.shape(), loc), loc), loc);
  const Tensor scaled = beta == 1 ? input : mul(input, scalar_like(beta, input, loc), loc);
  return add(scaled, product, loc);
}

Tensor logaddexp(const Tensor& a, const Tensor& b, Loc loc) {
  const Tensor both[] = {a, b};
  need_defined(both, "logaddexp", loc);
  // The larger operand plus softplus of the (non-positive) difference: exact gradients
  // (sigmoids of the difference) on both sides of the tie, no overflow.
  const Tensor a_larger = ge(a, b, loc);
  const Tensor r = where(a_larger, add(a, softplus(sub(b, a, loc), 1, 20, loc), loc),
                         add(b, softplus(sub(a, b, loc), 1, 20, loc), loc), loc);
  // Two infinities of one sign: that infinity (their difference is NaN).
  const Tensor same_infinity = where(isfinite(a, loc), false, eq(a, b, loc), loc);
  return where(same_infinity, a, r, loc);
}

}  // namespace lt
