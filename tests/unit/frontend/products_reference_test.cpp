// outer, baddbmm and logaddexp against PyTorch 1.13 (float64): values and gradients are what
// torch printed for the same program (the comments give it), eagerly and lazily.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::error_of;
using V = std::vector<double>;

Tensor leaf(V v, Shape s) {
  Tensor t = from_vector<double>(v, std::move(s));
  t.requires_grad_();
  return t;
}
void expect_near(const Tensor& t, const V& want) {
  const V got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) continue;
    if (std::isinf(want[i])) EXPECT_EQ(got[i], want[i]) << i;
    else EXPECT_NEAR(got[i], want[i], 1e-12 * std::max(1.0, std::abs(want[i]))) << i;
  }
}

TEST(ProductsReference, OuterBaddbmmLogaddexp) {
  const double inf = std::numeric_limits<double>::infinity();
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    ModeGuard guard(mode);
    // o = torch.outer(a, b); (o * torch.arange(6.).reshape(3, 2)).sum().backward()
    Tensor a = leaf({1, -2, 3}, {3}), b = leaf({0.5, 4}, {2});
    const Tensor o = outer(a, b);
    sum(o * reshape(arange(0, 6, 1, DType::F64), {3, 2})).backward();
    expect_near(o, {0.5, 4, -1, -8, 1.5, 12});
    expect_near(a.grad(), {4, 13, 22});
    expect_near(b.grad(), {8, 10});
    // r = torch.baddbmm(i, b1, b2, beta=0.5, alpha=2.0); (r * r).sum().backward()
    Tensor i = leaf(arange(0, 8, 1, DType::F64).to_vector<double>(), {2, 2, 2});
    Tensor b1 = leaf((arange(0, 12, 1, DType::F64) / 10.0).to_vector<double>(), {2, 2, 3});
    Tensor b2 = leaf((arange(0, 12, 1, DType::F64) - 5.0).to_vector<double>(), {2, 3, 2});
    const Tensor r = baddbmm(i, b1, b2, 0.5, 2.0);
    sum(r * r).backward();
    expect_near(r, {-1, 0.1, -5.4, -2.5, 15.4, 20.1, 21.8, 28.3});
    expect_near(i.grad(), {-1, 0.1, -5.4, -2.5, 15.4, 20.1, 21.8, 28.3});
    expect_near(b1.grad(), {18.4, 11.2, 4, 148, 84.8, 21.6, 222.4, 506.4, 790.4, 313.6, 714.4,
                            1115.2});
    expect_near(b2.grad(), {-6.48, -3, -9.04, -3.96, -11.6, -4.92, 115.44, 150.12, 130.32,
                            169.48, 145.2, 188.84});
    // l = torch.logaddexp(x, y); l[[0, 1, 2, 3, 6]].sum().backward()
    Tensor x = leaf({0, 1, -1000, 30, inf, -inf, 2}, {7});
    Tensor y = leaf({0, -3, 0, 30.5, inf, -inf, -inf}, {7});
    const Tensor l = logaddexp(x, y);
    const Tensor pick = from_vector<double>({1, 1, 1, 1, 0, 0, 1}, {7});
    sum(where(gt(pick, zeros_like(pick)), l, 0.0)).backward();
    expect_near(l, {0.6931471805599453, 1.0181499279178097, 0, 30.97407698418011, inf, -inf, 2});
    expect_near(x.grad(), {0.5, 0.9820137900379085, 0, 0.3775406687981454, NAN, NAN, 1});
    expect_near(y.grad(), {0.5, 0.01798620996209156, 1, 0.6224593312018546, NAN, NAN, 0});
    if (mode == Mode::Lazy) mark_step();
  }
}

TEST(ProductsReference, Errors) {
  const Tensor m = zeros({2, 2}, DType::F64), v = zeros({2}, DType::F64);
  auto reason = [](const std::string& e) { return e.substr(0, e.find(" (operands:")); };
  EXPECT_EQ(reason(error_of([&] { outer(m, v); })),
            "outer: Expected 1-D argument self, but got 2-D");
  EXPECT_EQ(reason(error_of([&] { baddbmm(m, m, zeros({2, 2, 2}, DType::F64)); })),
            "baddbmm: batch1 must be a 3D tensor");
  EXPECT_EQ(reason(error_of([&] {
              baddbmm(zeros({2, 2, 3}, DType::F64), zeros({2, 2, 4}, DType::F64),
                      zeros({2, 5, 3}, DType::F64));
            })),
            "baddbmm: Expected size for first two dimensions of batch2 tensor to be: [2, 4] but "
            "got: [2, 5].");
}

}  // namespace
}  // namespace lt
