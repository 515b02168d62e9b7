// Gradients at the kinks gradcheck avoids: the table's comments promise a rule for each (ties in
// max/min split evenly, maximum/minimum split ties half and half, max(x, dim) and max_pool2d's
// first maximum wins, clamp passes the gradient at its bounds, relu/abs have gradient 0 at 0),
// each PyTorch 1.13's. Central differences cannot check these, so
// each is pinned by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "lt/lt.h"
#include "tests/support/all_close.h"

namespace lt {
namespace {

using testing::AllClose;

Tensor vec(std::vector<double> v, Shape s) { return from_vector<double>(v, std::move(s)); }
Tensor leaf(std::vector<double> v, Shape s) {
  return vec(std::move(v), std::move(s)).requires_grad_();
}

TEST(TieRules, ReduceMaxSplitsEvenlyAmongTies) {
  Tensor x = leaf({1, 3, 3, 2, 2, 0}, {2, 3});
  sum(max(x, {1}) * vec({1, 4}, {2})).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({0, 0.5, 0.5, 2, 2, 0}, {2, 3})));
}

TEST(TieRules, ReduceMinSplitsEvenlyAmongTiesOverAllAxes) {
  Tensor x = leaf({1, 0, 0, 2, 0, 5}, {3, 2});
  min(x).backward();
  const double t = 1.0 / 3;
  EXPECT_TRUE(AllClose(x.grad(), vec({0, t, t, 0, t, 0}, {3, 2})));
}

TEST(TieRules, MaximumAndMinimumSplitTiesHalfAndHalf) {
  for (bool is_max : {true, false}) {
    SCOPED_TRACE(is_max ? "maximum" : "minimum");
    Tensor a = leaf({1, 2, 3}, {3});
    Tensor b = leaf({1, is_max ? 5.0 : -5.0, 3}, {3});
    sum(is_max ? maximum(a, b) : minimum(a, b)).backward();
    EXPECT_TRUE(AllClose(a.grad(), vec({0.5, 0, 0.5}, {3})));
    EXPECT_TRUE(AllClose(b.grad(), vec({0.5, 1, 0.5}, {3})));
  }
}

TEST(TieRules, MaximumTiesWithABroadcastOperand) {
  Tensor a = leaf({1, 1, 0, 1}, {2, 2});
  Tensor b = leaf({1}, {});
  sum(maximum(a, b)).backward();
  EXPECT_TRUE(AllClose(a.grad(), vec({0.5, 0.5, 0, 0.5}, {2, 2})));
  EXPECT_TRUE(AllClose(b.grad(), vec({2.5}, {})));  // three halves and one whole
}

TEST(TieRules, MaximumWithANanOperandGivesBothTheGradient) {
  Tensor a = leaf({std::nan(""), 1}, {2});
  Tensor b = leaf({1, std::nan("")}, {2});
  sum(maximum(a, b)).backward();
  EXPECT_TRUE(AllClose(a.grad(), vec({1, 1}, {2})));
  EXPECT_TRUE(AllClose(b.grad(), vec({1, 1}, {2})));
}

TEST(TieRules, MaxAlongADimSendsTheGradientToTheFirstMaximum) {
  Tensor x = leaf({1, 3, 3, 2, 2, 0}, {2, 3});
  const auto [values, indices] = max(x, 1);
  EXPECT_TRUE(AllClose(values, vec({3, 2}, {2})));
  EXPECT_EQ(indices.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  sum(values * vec({1, 4}, {2})).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({0, 1, 0, 4, 0, 0}, {2, 3})));
  Tensor y = leaf({1, 0, 0, 2, 0, 0}, {2, 3});
  const auto [mins, at] = min(y, 1, true);
  EXPECT_EQ(at.to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(at.shape(), (Shape{2, 1}));
  sum(mins).backward();
  EXPECT_TRUE(AllClose(y.grad(), vec({0, 1, 0, 0, 1, 0}, {2, 3})));
}

TEST(TieRules, ClampPassesTheGradientOnItsBounds) {
  Tensor x = leaf({-1, 0, 0.5, 1, 2}, {5});
  sum(clamp(x, 0.0, 1.0)).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({0, 1, 1, 1, 0}, {5})));
  Tensor y = leaf({-1, 0, 0.5, 1, 2}, {5});
  sum(clamp(y, 0.0)).backward();
  EXPECT_TRUE(AllClose(y.grad(), vec({0, 1, 1, 1, 1}, {5})));
  Tensor z = leaf({-1, 0, 0.5, 1, 2}, {5});  // min > max: max everywhere, no gradient
  const Tensor c = clamp(z, 1.0, 0.0);
  EXPECT_TRUE(AllClose(c, vec({0, 0, 0, 0, 0}, {5})));
  sum(c).backward();
  EXPECT_TRUE(AllClose(z.grad(), vec({0, 0, 0, 0, 0}, {5})));
}

TEST(TieRules, ReluAndAbsHaveZeroGradientAtZero) {
  Tensor x = leaf({-1, 0, 2}, {3});
  sum(relu(x)).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({0, 0, 1}, {3})));
  Tensor y = leaf({-1, 0, 2}, {3});
  sum(abs(y)).backward();
  EXPECT_TRUE(AllClose(y.grad(), vec({-1, 0, 1}, {3})));
}

TEST(TieRules, MaxPoolFirstMaximumOfAWindowWins) {
  // One 2x2 window of equal values: the gradient goes to the first (row-major) element.
  Tensor x = leaf({5, 5, 5, 5}, {1, 1, 2, 2});
  sum(max_pool2d(x, {.kernel = {2, 2}})).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({1, 0, 0, 0}, {1, 1, 2, 2})));
  // Overlapping 2x2 windows, stride 1, over [[1,7,7],[7,0,7]]: each window's first 7 wins.
  Tensor z = leaf({1, 7, 7, 7, 0, 7}, {1, 1, 2, 3});
  sum(max_pool2d(z, {.kernel = {2, 2}, .stride = {1, 1}})).backward();
  EXPECT_TRUE(AllClose(z.grad(), vec({0, 2, 0, 0, 0, 0}, {1, 1, 2, 3})));
}

TEST(TieRules, MaxPoolPaddingNeverWins) {
  // All inputs negative: padding counts as -inf, so no window's maximum (or gradient) is padding.
  Tensor x = leaf({-4, -3, -2, -1}, {1, 1, 2, 2});
  Tensor y = max_pool2d(x, {.kernel = {2, 2}, .stride = {1, 1}, .padding = {1, 1}});
  EXPECT_TRUE(AllClose(y, vec({-4, -3, -3, -2, -1, -1, -2, -1, -1}, {1, 1, 3, 3})));
  sum(y).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({1, 2, 2, 4}, {1, 1, 2, 2})));
}

}  // namespace
}  // namespace lt
