// ir::scalar::Erf's float form against libm's erf in double: its documented accuracy over every
// range that matters, and its special values.
#include "ir/elementwise_scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/support/central_difference.h"

namespace lt::ir::scalar {
namespace {

/// |got - want| in units of the float spacing at want.
double ulps(float got, double want) {
  const float w = static_cast<float>(want);
  const double spacing = std::nextafter(std::fabs(w), std::numeric_limits<float>::infinity()) -
                         std::fabs(w);
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

TEST(ScalarErf, FloatFormWithinItsDocumentedErrorOfLibm) {
  double worst = 0, worst_rel = 0;
  auto check = [&](float x) {
    const double want = std::erf(static_cast<double>(x));
    const float got = Erf::apply(x);
    worst = std::max(worst, ulps(got, want));
    if (want != 0) worst_rel = std::max(worst_rel, std::fabs(got - want) / std::fabs(want));
  };
  for (int i = -600000; i <= 600000; ++i) check(static_cast<float>(i) * 1e-5f);  // [-6, 6]
  for (float x = 1e-38f; x < 1; x *= 1.001f) check(x), check(-x);
  EXPECT_LE(worst, 7.3);
  EXPECT_LE(worst_rel, 4.4e-7);
}

TEST(ScalarErf, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Erf::apply(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(Erf::apply(-0.0f)));
  EXPECT_EQ(Erf::apply(inf), 1.0f);
  EXPECT_EQ(Erf::apply(-inf), -1.0f);
  EXPECT_EQ(Erf::apply(4.0f), 1.0f);
  EXPECT_TRUE(std::isnan(Erf::apply(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(Erf::apply(-2.5f), -Erf::apply(2.5f));  // odd
  // Doubles keep libm's erf.
  EXPECT_EQ(Erf::apply(0.3), std::erf(0.3));
}

// Exact GELU against x/2 (1 + erf(x/sqrt(2))) in double: within 1e-6 of |x| (for large negative
// x it is a small difference of nearly equal terms, as in every float GELU).
TEST(ScalarGeluErf, FloatFormCloseToTheDoubleDefinition) {
  double worst = 0;
  for (int i = -800000; i <= 800000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;  // [-8, 8]
    const double xd = x;
    const double want = 0.5 * xd * (1 + std::erf(xd / std::sqrt(2.0)));
    worst = std::max(worst, std::fabs(GeluErf::apply(x) - want) / std::max(1.0, std::fabs(xd)));
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_EQ(GeluErf::apply(0.0f), 0.0f);
  EXPECT_EQ(GeluErf::apply(10.0f), 10.0f);
  EXPECT_EQ(GeluErf::apply(-10.0f), 0.0f);
  EXPECT_TRUE(std::isnan(GeluErf::apply(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_DOUBLE_EQ(GeluErf::apply(0.3), 0.15 * (1 + std::erf(0.3 / std::sqrt(2.0))));
}

// gelu_erf's slope against the derivative of x/2 (1 + erf(x/sqrt(2))) in double, both its closed
// form Phi(x) + x phi(x) and a central difference of the definition: within 1e-6 (the float erf's
// 4.4e-7 relative error, and the exp's rounding).
TEST(ScalarGeluErfGrad, FloatFormIsTheSlopeOfTheDoubleDefinition) {
  auto gelu = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  double worst = 0, worst_difference = 0;
  for (int i = -800000; i <= 800000; ++i) {
    const float x = static_cast<float>(i) * 1e-5f;  // [-8, 8]
    const double xd = x;
    const double want = 0.5 * (1 + std::erf(xd / std::sqrt(2.0))) +
                        xd * std::exp(-0.5 * xd * xd) / std::sqrt(2 * std::acos(-1.0));
    worst = std::max(worst, std::fabs(GeluErfGrad::apply(x) - want));
    const double slope = lt::testing::central_difference(gelu, xd, {.eps = 1e-4});
    worst_difference = std::max(worst_difference, std::fabs(GeluErfGrad::apply(x) - slope));
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_LE(worst_difference, 2e-6);
  EXPECT_EQ(GeluErfGrad::apply(0.0f), 0.5f);
  EXPECT_EQ(GeluErfGrad::apply(20.0f), 1.0f);  // exp(-200) is 0 in float
  EXPECT_EQ(GeluErfGrad::apply(-20.0f), 0.0f);
  EXPECT_TRUE(std::isnan(GeluErfGrad::apply(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace lt::ir::scalar
