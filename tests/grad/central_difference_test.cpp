// The central-difference reference itself (tests/support/central_difference.h), on functions
// whose derivatives are known in closed form: the step it takes, the elements it visits and
// the difference it divides.
#include "tests/support/central_difference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace lt::testing {
namespace {

// For a cubic the central difference's error is exactly h^2 times the third derivative / 6.
TEST(CentralDifference, ScalarErrorIsOfOrderHSquared) {
  const auto cube = [](double x) { return x * x * x; };
  for (const double h : {1e-2, 1e-3}) {
    const double got = central_difference(cube, 2.0, {.eps = h});
    EXPECT_NEAR(got, 12.0 + h * h, 1e-9) << h;
  }
}

// A relative step scales with |x| beyond 1: for x = 1000 it is 1000 eps, so the cubic's error is
// (1000 eps)^2.
TEST(CentralDifference, RelativeStepGrowsWithX) {
  EXPECT_EQ((Step{.eps = 1e-3, .relative = true}).at(0.5), 1e-3);
  EXPECT_DOUBLE_EQ((Step{.eps = 1e-3, .relative = true}).at(-1000.0), 1.0);
  EXPECT_EQ((Step{.eps = 1e-3}).at(-1000.0), 1e-3);
  const auto cube = [](double x) { return x * x * x; };
  EXPECT_NEAR(central_difference(cube, 1000.0, {.eps = 1e-3, .relative = true}), 3e6 + 1.0, 1e-6);
}

// The gradient of sum_j c_j x_j^2 is 2 c_j x_j, exact for a quadratic up to rounding; each
// evaluation sees x with one element moved, and x itself afterwards.
TEST(CentralDifference, GradientPerturbsOneElementAtATime) {
  const std::vector<double> c = {1.0, -2.0, 0.5, 3.0}, x = {0.3, -1.1, 2.0, 0.7};
  int calls = 0;
  const auto f = [&](const std::vector<double>& y) {
    ++calls;
    int moved = 0;
    double s = 0;
    for (size_t j = 0; j < y.size(); ++j) {
      moved += y[j] != x[j];
      s += c[j] * y[j] * y[j];
    }
    EXPECT_EQ(moved, 1);
    return s;
  };
  const std::vector<double> g = central_differences(f, x, {.eps = 1e-5});
  ASSERT_EQ(g.size(), x.size());
  for (size_t j = 0; j < x.size(); ++j) EXPECT_NEAR(g[j], 2 * c[j] * x[j], 1e-9) << j;
  EXPECT_EQ(calls, 8);
}

// Elements in the order asked, and a difference the caller takes itself (here of pairs).
TEST(CentralDifference, ChosenElementsAndTheCallersDifference) {
  const std::vector<double> x = {1.0, 2.0, 3.0};
  const auto f = [](const std::vector<double>& y) {
    return std::vector<double>{y[0] * y[1], y[2] * y[2]};
  };
  const auto diff = [](const std::vector<double>& p, const std::vector<double>& m) {
    return (p[0] - m[0]) + (p[1] - m[1]);
  };
  const std::vector<double> g =
      central_differences(f, x, {.eps = 1e-6}, std::vector<int64_t>{2, 0}, diff);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(g[0], 6.0, 1e-8);  // d/dx2 of x2^2
  EXPECT_NEAR(g[1], 2.0, 1e-8);  // d/dx0 of x0 x1
}

}  // namespace
}  // namespace lt::testing
