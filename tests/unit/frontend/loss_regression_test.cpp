// The regression losses and binary cross entropy with logits: values against their definitions
// computed on the host and against PyTorch 1.13's figures, gradients against central finite
// differences, lazy mode against eager, and the errors of bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/central_difference.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;
using V = std::vector<double>;

Tensor f64(V v, Shape s) { return from_vector<double>(v, std::move(s)); }

// Differences input - target: 0.5, -0.5, 2.5, -0.75, -0.25, 2.5 (both sides of 0.8, none at 0).
const V kInput{0.5, -2.0, 3.5, 0.25, -0.75, 1.5};
const V kTarget{0.0, -1.5, 1.0, 1.0, -0.5, -1.0};

V elementwise(const std::function<double(double)>& f) {
  V out;
  for (size_t i = 0; i < kInput.size(); ++i) out.push_back(f(kInput[i] - kTarget[i]));
  return out;
}

double total(const V& v) {
  double s = 0;
  for (double e : v) s += e;
  return s;
}

TEST(RegressionLoss, ElementsSumAndMeanFollowTheDefinitions) {
  const Tensor x = f64(kInput, {2, 3}), t = f64(kTarget, {2, 3});
  const double beta = 0.8;
  auto smooth = [&](double d) {
    return std::abs(d) < beta ? 0.5 * d * d / beta : std::abs(d) - 0.5 * beta;
  };
  struct Case {
    const char* name;
    std::function<Tensor(const std::string&)> loss;
    V ref;
  };
  const Case cases[] = {
      {"mse", [&](const std::string& r) { return mse_loss(x, t, r); },
       elementwise([](double d) { return d * d; })},
      {"l1", [&](const std::string& r) { return l1_loss(x, t, r); },
       elementwise([](double d) { return std::abs(d); })},
      {"smooth_l1", [&](const std::string& r) { return smooth_l1_loss(x, t, beta, r); },
       elementwise(smooth)},
      {"smooth_l1 beta 0", [&](const std::string& r) { return smooth_l1_loss(x, t, 0.0, r); },
       elementwise([](double d) { return std::abs(d); })},
      {"huber", [&](const std::string& r) { return huber_loss(x, t, beta, r); },
       elementwise([&](double d) { return beta * smooth(d); })},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor none = c.loss("none");
    EXPECT_EQ(none.shape(), (Shape{2, 3}));
    EXPECT_TRUE(AllClose(none, f64(c.ref, {2, 3}), 1e-15, 1e-15));
    EXPECT_NEAR(c.loss("sum").item<double>(), total(c.ref), 1e-14);
    EXPECT_NEAR(c.loss("mean").item<double>(), total(c.ref) / 6, 1e-14);
  }
  // PyTorch 1.13's F.mse_loss, F.l1_loss, F.smooth_l1_loss(beta=0.8), F.huber_loss(delta=0.8)
  // of these values.
  EXPECT_NEAR(mse_loss(x, t).item<double>(), 2.2708333333333335, 1e-15);
  EXPECT_NEAR(l1_loss(x, t).item<double>(), 1.1666666666666667, 1e-15);
  EXPECT_NEAR(smooth_l1_loss(x, t, 0.8).item<double>(), 0.8171875000000001, 1e-15);
  EXPECT_NEAR(huber_loss(x, t, 0.8).item<double>(), 0.65375, 1e-15);
}

/// d loss / d input by central differences, one element at a time.
V finite_difference(const std::function<Tensor(const Tensor&)>& loss, const V& at) {
  return testing::central_differences(
      [&](const V& x) {
        return loss(f64(x, {2, 3})).item<double>();
      },
      at, {.eps = 1e-6});
}

V autograd_of(const std::function<Tensor(const Tensor&)>& loss, const V& at) {
  Tensor x = f64(at, {2, 3});
  x.requires_grad_();
  loss(x).backward();
  return x.grad().to_vector<double>();
}

void expect_gradient_matches(const std::function<Tensor(const Tensor&)>& loss, const V& at) {
  const V fd = finite_difference(loss, at), ad = autograd_of(loss, at);
  ASSERT_EQ(fd.size(), ad.size());
  for (size_t i = 0; i < fd.size(); ++i) EXPECT_NEAR(ad[i], fd[i], 1e-8) << "element " << i;
}

TEST(RegressionLoss, GradientsMatchFiniteDifferences) {
  const Tensor t = f64(kTarget, {2, 3});
  expect_gradient_matches([&](const Tensor& x) { return mse_loss(x, t); }, kInput);
  expect_gradient_matches([&](const Tensor& x) { return l1_loss(x, t, "sum"); }, kInput);
  expect_gradient_matches([&](const Tensor& x) { return smooth_l1_loss(x, t, 0.8); }, kInput);
  expect_gradient_matches([&](const Tensor& x) { return huber_loss(x, t, 0.8, "sum"); }, kInput);
}

const V kLogits{0.3, -1.2, 2.0, 1.1, 0.0, -0.4};
const V kProbs{1, 0, 0.25, 0, 1, 0.5};

TEST(BceWithLogits, MatchesTheDefinitionAndPyTorch) {
  const Tensor x = f64(kLogits, {2, 3}), t = f64(kProbs, {2, 3});
  V ref;
  for (size_t i = 0; i < kLogits.size(); ++i) {
    const double s = 1 / (1 + std::exp(-kLogits[i]));
    ref.push_back(-(kProbs[i] * std::log(s) + (1 - kProbs[i]) * std::log(1 - s)));
  }
  EXPECT_TRUE(AllClose(binary_cross_entropy_with_logits(x, t, {.reduction = "none"}),
                       f64(ref, {2, 3}), 1e-15, 1e-15));
  EXPECT_NEAR(binary_cross_entropy_with_logits(x, t, {.reduction = "sum"}).item<double>(),
              total(ref), 1e-14);
  // PyTorch 1.13's F.binary_cross_entropy_with_logits of these values: plain, then with
  // weight [[0.5], [2]] and pos_weight [1, 3, 0.5], both broadcast.
  EXPECT_NEAR(binary_cross_entropy_with_logits(x, t).item<double>(), 0.8730105801541432, 1e-15);
  const BceWithLogitsOptions weighted{.weight = f64({0.5, 2}, {2, 1}),
                                      .pos_weight = f64({1, 3, 0.5}, {3})};
  EXPECT_NEAR(binary_cross_entropy_with_logits(x, t, weighted).item<double>(),
              1.5195710788208403, 1e-15);
  BceWithLogitsOptions none = weighted;
  none.reduction = "none";
  EXPECT_TRUE(AllClose(binary_cross_entropy_with_logits(x, t, none),
                       f64({0.2771776222342635, 0.1316412336690157, 0.8055310048313005,
                            2.7746706502308616, 4.1588830833596715, 0.9695228785999287},
                           {2, 3}),
                       1e-15, 1e-15));
}

TEST(BceWithLogits, LargeLogitsStayFinite) {
  // PyTorch: [1000, 1000, 0, 0]; log(1 + e^1000) computed as written would be inf.
  const Tensor x = from_vector<float>({1000, -1000, 100, -100}, {4});
  const Tensor t = from_vector<float>({0, 1, 1, 0}, {4});
  EXPECT_EQ(binary_cross_entropy_with_logits(x, t, {.reduction = "none"}).to_vector<float>(),
            (std::vector<float>{1000, 1000, 0, 0}));
}

TEST(BceWithLogits, GradientMatchesFiniteDifferences) {
  const Tensor t = f64(kProbs, {2, 3});
  const BceWithLogitsOptions weighted{.weight = f64({0.5, 2}, {2, 1}),
                                      .pos_weight = f64({1, 3, 0.5}, {3})};
  expect_gradient_matches(
      [&](const Tensor& x) { return binary_cross_entropy_with_logits(x, t); }, kLogits);
  expect_gradient_matches(
      [&](const Tensor& x) { return binary_cross_entropy_with_logits(x, t, weighted); }, kLogits);
}

TEST(RegressionLoss, LazyModeGivesEagerModesValues) {
  const Tensor x = from_vector<float>({0.5f, -2, 3.5f, 0.25f, -0.75f, 1.5f}, {2, 3});
  const Tensor t = from_vector<float>({0, -1.5f, 1, 1, -0.5f, -1}, {2, 3});
  const Tensor p = from_vector<float>({1, 0, 0.25f, 0, 1, 0.5f}, {2, 3});
  auto all = [&] {
    return std::vector<Tensor>{mse_loss(x, t), l1_loss(x, t, "sum"),
                               smooth_l1_loss(x, t, 0.8, "none"), huber_loss(x, t, 0.8),
                               binary_cross_entropy_with_logits(x, p)};
  };
  const std::vector<Tensor> eager = all();
  std::vector<Tensor> lazy;
  {
    ModeGuard guard(Mode::Lazy);
    lazy = all();
    mark_step();
  }
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_TRUE(AllClose(lazy[i], eager[i], 1e-6, 1e-6)) << "loss " << i;
}

TEST(RegressionLoss, BadArgumentsNameTheArgument) {
  using ::testing::StartsWith;
  const Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(error_of([&] { mse_loss(x, f64({1, 2, 3}, {3})); }),
              StartsWith("mse_loss: needs a float input and a target of the same type, got "
                         "f64[2,3] and f64[3] (operands: f64[2,3], f64[3]) at "));
  EXPECT_THAT(error_of([&] { l1_loss(x, x, "avg"); }),
              StartsWith("l1_loss: reduction must be \"none\", \"sum\" or \"mean\", got \"avg\""));
  EXPECT_THAT(error_of([&] { smooth_l1_loss(x, x, -1); }),
              StartsWith("smooth_l1_loss: beta must be >= 0, got -1 (operands: "));
  EXPECT_THAT(error_of([&] { huber_loss(x, x, 0); }),
              StartsWith("huber_loss: delta must be > 0, got 0 (operands: "));
  const Tensor labels = from_vector<int64_t>({0, 1, 0, 1, 0, 1}, {2, 3});
  EXPECT_THAT(error_of([&] { binary_cross_entropy_with_logits(x, labels); }),
              StartsWith("binary_cross_entropy_with_logits: needs a float input and a target of "
                         "the same type, got f64[2,3] and i64[2,3]"));
  EXPECT_THAT(
      error_of([&] { binary_cross_entropy_with_logits(x, x, {.pos_weight = f64({1, 2}, {2})}); }),
      StartsWith("binary_cross_entropy_with_logits: pos_weight must broadcast to f64[2,3] (the "
                 "logits' type), got f64[2] (operands: f64[2,3], f64[2,3], f64[2]) at "));
  EXPECT_THAT(error_of([&] {
                binary_cross_entropy_with_logits(x, x, {.weight = from_vector<float>({1}, {1})});
              }),
              StartsWith("binary_cross_entropy_with_logits: weight must broadcast to f64[2,3] "
                         "(the logits' type), got f32[1]"));
  // A weight that would enlarge the loss's shape does not broadcast to the logits.
  const Tensor stacked = reshape(concat({x, x}, 0), {2, 2, 3});
  EXPECT_THAT(error_of([&] { binary_cross_entropy_with_logits(x, x, {.weight = stacked}); }),
              StartsWith("binary_cross_entropy_with_logits: weight must broadcast to f64[2,3] "
                         "(the logits' type), got f64[2,2,3]"));
}

}  // namespace
}  // namespace lt
