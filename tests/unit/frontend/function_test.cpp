// Custom functions (lt/function.h): the hand-written gradient is the one backward() runs, in
// eager and lazy mode; saved tensors and needs_input_grad reach it; misuse is an error naming the
// function and the caller's line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;

Tensor vec(std::vector<double> v, Shape s) { return from_vector<double>(v, std::move(s)); }

// softplus(x) = log(1 + exp(x)), whose gradient sigmoid(x) the backward computes from the saved
// exp(x) instead of autograd's chain through log and add.
Tensor softplus_fn(const Tensor& x, Loc loc = Loc::current()) {
  const Tensor in[] = {x};
  return apply_function(
      "Softplus", in,
      [](std::span<const Tensor> xs) -> FunctionOutputs {
        const Tensor e = exp(xs[0]);
        return {{log(e + 1.0)}, {e}};
      },
      [](const FunctionGradArgs& a) -> std::vector<Tensor> {
        const Tensor& e = a.saved[0];
        return {a.grad_outputs[0] * e / (e + 1.0)};
      },
      loc)[0];
}

TEST(Function, GradientIsTheHandWrittenOneInEagerAndLazyMode) {
  const std::vector<double> xs{-3, -0.5, 0, 0.25, 2, 7};
  for (Mode mode : {Mode::Eager, Mode::Lazy}) {
    ModeGuard guard(mode);
    Tensor x = vec(xs, {2, 3}).requires_grad_();
    Tensor w = vec({1, -2, 3, 0.5, 4, -1}, {2, 3});
    const Tensor y = softplus_fn(x);
    EXPECT_TRUE(y.requires_grad());
    sum(y * w).backward();
    mark_step();
    std::vector<double> want_y, want_g;
    const std::vector<double> wv = w.to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) {
      want_y.push_back(std::log1p(std::exp(xs[i])));
      want_g.push_back(wv[i] / (1 + std::exp(-xs[i])));
    }
    EXPECT_TRUE(AllClose(y, vec(want_y, {2, 3}), 1e-12, 1e-12));
    EXPECT_TRUE(AllClose(x.grad(), vec(want_g, {2, 3}), 1e-12, 1e-12));
  }
}

// The node's gradient replaces the forward ops' own: a backward that scales by 3 instead of the
// derivative 2x of x * x is what reaches x.grad.
TEST(Function, BackwardReplacesTheForwardOpsGradient) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  const Tensor in[] = {x};
  const Tensor y = apply_function(
      "NotSquare", in,
      [](std::span<const Tensor> xs) -> FunctionOutputs {
        return {{xs[0] * xs[0]}, {}};
      },
      [](const FunctionGradArgs& a) -> std::vector<Tensor> {
        return {a.grad_outputs[0] * 3.0};
      })[0];
  sum(y).backward();
  EXPECT_TRUE(AllClose(x.grad(), vec({3, 3}, {2})));
}

TEST(Function, BackwardSeesWhichInputsWantAGradientAndZerosForUnusedOutputs) {
  Tensor a = vec({1, 2}, {2}).requires_grad_();
  Tensor b = vec({5, 7}, {2});
  std::vector<char> seen_needs;
  std::vector<double> seen_g2;
  const Tensor in[] = {a, b};
  const std::vector<Tensor> out = apply_function(
      "TwoOut", in,
      [](std::span<const Tensor> xs) -> FunctionOutputs {
        return {{xs[0] * xs[1], xs[0] + xs[1]}, {}};
      },
      [&](const FunctionGradArgs& a) -> std::vector<Tensor> {
        seen_needs.assign(a.needs_input_grad.begin(), a.needs_input_grad.end());
        seen_g2 = a.grad_outputs[1].to_vector<double>();
        return {a.grad_outputs[0] * a.inputs[1] + a.grad_outputs[1], Tensor()};
      });
  ASSERT_EQ(out.size(), 2u);
  sum(out[0]).backward();  // nothing flows into out[1]
  EXPECT_EQ(seen_needs, (std::vector<char>{1, 0}));
  EXPECT_EQ(seen_g2, (std::vector<double>{0, 0}));
  EXPECT_TRUE(AllClose(a.grad(), vec({5, 7}, {2})));
}

TEST(Function, NothingIsRecordedWithoutAnInputThatNeedsAGradient) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  bool ran = false;
  const auto forward = [](std::span<const Tensor> xs) -> FunctionOutputs {
    return {{xs[0] * 2.0}, {}};
  };
  const auto backward = [&](const FunctionGradArgs&) -> std::vector<Tensor> {
    ran = true;
    return {Tensor()};
  };
  {
    NoGradGuard no_grad;
    const Tensor in[] = {x};
    EXPECT_FALSE(apply_function("Twice", in, forward, backward)[0].requires_grad());
  }
  const Tensor in[] = {vec({1, 2}, {2})};
  EXPECT_FALSE(apply_function("Twice", in, forward, backward)[0].requires_grad());
  EXPECT_FALSE(ran);
}

TEST(Function, ABackwardWithTheWrongCountOrShapeIsAnErrorNamingTheFunction) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  const Tensor in[] = {x};
  const auto forward = [](std::span<const Tensor> xs) -> FunctionOutputs {
    return {{xs[0] * 2.0}, {}};
  };
  const int line = __LINE__ + 1;
  const Tensor y1 = apply_function(
      "Twice", in, forward, [](const FunctionGradArgs&) { return std::vector<Tensor>{}; })[0];
  EXPECT_EQ(error_of([&] { sum(y1).backward(); }),
            "Twice: backward returned 0 gradients for 1 inputs (function at function_test.cpp:" +
                std::to_string(line) + ")");
  const int line2 = __LINE__ + 1;
  const Tensor y2 = apply_function("Twice", in, forward, [](const FunctionGradArgs&) {
    return std::vector<Tensor>{vec({1, 2, 3}, {3})};
  })[0];
  EXPECT_EQ(error_of([&] { sum(y2).backward(); }),
            "Twice: backward returned a gradient f64[3] for input 0 of f64[2] (function at "
            "function_test.cpp:" +
                std::to_string(line2) + ")");
}

TEST(Function, AForwardReturningItsInputIsAnError) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  const Tensor in[] = {x};
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] {
              apply_function(
                  "Identity", in,
                  [](std::span<const Tensor> xs) -> FunctionOutputs {
                    return {{xs[0]}, {}};
                  },
                  [](const FunctionGradArgs& a) { return std::vector<Tensor>{a.grad_outputs[0]}; });
            }),
            "Identity: output 0 of the forward is an input, another output or a tensor with "
            "autograd history; return new tensors made by its ops at function_test.cpp:" +
                std::to_string(line));
  x.requires_grad_(true);  // still a leaf: only leaves can be marked
}

// A recorded pass would differentiate the backward's ops without the saved values' history: a
// silently partial second derivative, so it is an error.
TEST(Function, ARecordedBackwardThroughItIsAnError) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  const int line = __LINE__ + 1;
  const Tensor y = sum(softplus_fn(x));
  const std::string msg = error_of([&] { autograd::grad({y}, {x}, {}, std::nullopt, true); });
  EXPECT_EQ(msg.substr(0, msg.find(", whose")),
            "Softplus: a backward with create_graph reaches this custom function (traced at "
            "function_test.cpp:" + std::to_string(line) + ")");
  EXPECT_TRUE(AllClose(autograd::grad({y}, {x})[0], sigmoid(x.detach())));
}

TEST(Function, ASecondBackwardThroughItNamesTheFunction) {
  Tensor x = vec({1, 2}, {2}).requires_grad_();
  const int line = __LINE__ + 1;
  const Tensor y = softplus_fn(x);
  const Tensor ones = vec({1, 1}, {2});
  y.backward(ones);
  EXPECT_EQ(error_of([&] { y.backward(ones); }),
            "backward: the graph through Softplus (traced at function_test.cpp:" +
                std::to_string(line) + ") was freed by an earlier backward()");
}

}  // namespace
}  // namespace lt
