// lt::autograd::grad (torch::autograd::grad): gradients returned without touching grad(), of
// leaves and intermediates, weighted by grad_outputs; create_graph's second derivatives and a
// gradient penalty against central differences, eagerly and lazily; PyTorch's errors. And
// lt::autograd::backward (torch::autograd::backward): create_graph, inputs= and retain_graph.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/central_difference.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;

Tensor vec(std::vector<double> v, Shape s) { return from_vector<double>(v, std::move(s)); }

const std::vector<double> kX = {0.5, -1.25, 2.0};

TEST(AutogradGrad, ReturnsTheGradientAndLeavesGradAlone) {
  Tensor x = vec(kX, {3}).requires_grad_();
  const Tensor y = sum(x * x * x);
  const std::vector<Tensor> g = autograd::grad({y}, {x});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(AllClose(g[0], vec({0.75, 4.6875, 12}, {3})));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(g[0].requires_grad());  // without create_graph a gradient is a plain value
}

TEST(AutogradGrad, OfAnIntermediateWithWeightedOutputs) {
  Tensor x = vec(kX, {3}).requires_grad_();
  const Tensor h = x * 2.0;
  const Tensor y1 = h * h, y2 = sum(h);
  // d(w . y1 + 3 y2)/dh = 2 h w + 3
  const std::vector<Tensor> g =
      autograd::grad({y1, y2}, {h, x}, {vec({1, 0, -1}, {3}), scalar(3.0, DType::F64)});
  EXPECT_TRUE(AllClose(g[0], vec({2 * 1.0 * 1 + 3, 3, -2 * 4.0 + 3}, {3})));
  EXPECT_TRUE(AllClose(g[1], g[0] * 2.0));
}

/// d/dx of sum(v * d/dx sum(sin(x)^2 x)), by create_graph, against central differences of the
/// first derivative (itself from autograd::grad without create_graph).
void check_second_derivative() {
  const Tensor v = vec({1, -2, 0.5}, {3});
  auto first = [&](const Tensor& x, bool create) {
    return autograd::grad({sum(sin(x) * sin(x) * x)}, {x}, {}, std::nullopt, create)[0];
  };
  Tensor x = vec(kX, {3}).requires_grad_();
  const Tensor g = first(x, true);
  EXPECT_TRUE(g.requires_grad());
  const Tensor hv = autograd::grad({sum(g * v)}, {x})[0];
  const std::vector<double> got = hv.to_vector<double>();
  const std::vector<double> want = testing::central_differences(
      [&](const std::vector<double>& p) {
        Tensor xp = vec(p, {3}).requires_grad_();
        return sum(first(xp, false) * v).item<double>();
      },
      kX, {1e-6}, {0, 1, 2});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-7) << i;
}

TEST(AutogradGrad, CreateGraphGivesSecondDerivativesEager) { check_second_derivative(); }

TEST(AutogradGrad, CreateGraphGivesSecondDerivativesLazy) {
  ModeGuard lazy(Mode::Lazy);
  check_second_derivative();
}

// A WGAN-GP style penalty: (|d critic / d x| - 1)^2 trained through the critic's weight.
TEST(AutogradGrad, GradientPenaltyTrainsThroughTheWeight) {
  const Tensor x = vec({0.3, -0.7, 1.1, 0.2, 0.5, -0.4}, {2, 3});
  const std::vector<double> w0 = {0.2, -0.5, 0.9, 0.1, 0.4, -0.3};
  auto penalty = [&](const Tensor& w) {
    Tensor xi = x.detach().requires_grad_();
    const Tensor critic = sum(tanh(matmul(xi, reshape(w, {3, 2}))));
    const Tensor gx = autograd::grad({critic}, {xi}, {}, std::nullopt, true)[0];
    const Tensor norm = sqrt(sum(gx * gx, {1}));
    return sum((norm - 1.0) * (norm - 1.0));
  };
  Tensor w = vec(w0, {6}).requires_grad_();
  penalty(w).backward();
  const std::vector<double> got = w.grad().to_vector<double>();
  const std::vector<double> want = testing::central_differences(
      [&](const std::vector<double>& p) { return penalty(vec(p, {6})).item<double>(); }, w0,
      {1e-6}, {0, 1, 2, 3, 4, 5});
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-7) << i;
}

TEST(AutogradGrad, RetainGraphAllowsASecondPass) {
  Tensor x = vec(kX, {3}).requires_grad_();
  const Tensor y = sum(exp(x));
  const Tensor g1 = autograd::grad({y}, {x}, {}, true)[0];
  const Tensor g2 = autograd::grad({y}, {x})[0];
  EXPECT_TRUE(AllClose(g1, g2));
  const std::string msg = error_of([&] { autograd::grad({y}, {x}); });
  EXPECT_NE(msg.find("was freed by an earlier backward()"), std::string::npos) << msg;
}

TEST(AutogradGrad, PyTorchsErrors) {
  Tensor x = vec(kX, {3}).requires_grad_();
  Tensor unused = vec(kX, {3}).requires_grad_();
  const Tensor y = sum(x * x);
  const auto message = [](const std::string& m) { return m.substr(0, m.find(" at ")); };
  EXPECT_EQ(message(error_of([&] { autograd::grad({y}, {x, unused}, {}, true); })),
            "autograd::grad: One of the differentiated Tensors appears to not have been used in "
            "the graph. Set allow_unused=True if this is the desired behavior.");
  const std::vector<Tensor> g = autograd::grad({y}, {x, unused}, {}, true, false, true);
  EXPECT_FALSE(g[1].defined());
  EXPECT_EQ(message(error_of([&] { autograd::grad({x * 2.0}, {x}); })),
            "autograd::grad: grad can be implicitly created only for scalar outputs");
  EXPECT_EQ(message(error_of([&] { autograd::grad({vec(kX, {3})}, {x}); })),
            "autograd::grad: element 0 of tensors does not require grad and does not have a "
            "grad_fn");
  EXPECT_EQ(message(error_of([&] { autograd::grad({y}, {vec(kX, {3})}); })),
            "autograd::grad: One of the differentiated Tensors does not require grad");
}

/// autograd::backward with create_graph leaves x.grad() with history: its derivative along v is
/// the second derivative, against central differences of the first.
void check_backward_create_graph() {
  const Tensor v = vec({1, -2, 0.5}, {3});
  auto f = [](const Tensor& x) { return sum(sin(x) * sin(x) * x); };
  Tensor x = vec(kX, {3}).requires_grad_();
  autograd::backward({f(x)}, {}, std::nullopt, true);
  ASSERT_TRUE(x.grad().requires_grad());
  const Tensor hv = autograd::grad({sum(x.grad() * v)}, {x})[0];
  const std::vector<double> got = hv.to_vector<double>();
  const std::vector<double> want = testing::central_differences(
      [&](const std::vector<double>& p) {
        Tensor xp = vec(p, {3}).requires_grad_();
        return sum(autograd::grad({f(xp)}, {xp})[0] * v).item<double>();
      },
      kX, {1e-6}, {0, 1, 2});
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-7) << i;
  x.set_grad(Tensor());  // the gradient's history holds x: a cycle, as PyTorch warns
}

TEST(AutogradBackward, CreateGraphGivesGradAHistoryEager) { check_backward_create_graph(); }

TEST(AutogradBackward, CreateGraphGivesGradAHistoryLazy) {
  ModeGuard lazy(Mode::Lazy);
  check_backward_create_graph();
}

TEST(AutogradBackward, InputsAccumulateOnlyIntoThoseTensors) {
  Tensor x = vec(kX, {3}).requires_grad_();
  Tensor w = vec({2, -1, 0.5}, {3}).requires_grad_();
  int hook_calls = 0;
  x.register_hook([&](const Tensor& g) {
    ++hook_calls;
    return g * 10.0;
  });
  const Tensor h = x * w;
  const Tensor y = sum(h * h);
  autograd::backward({y}, {}, std::nullopt, false, {h, x, h});
  const Tensor dh = h.detach() * 2.0;
  EXPECT_TRUE(AllClose(h.grad(), dh));  // listed twice, accumulated once
  EXPECT_TRUE(AllClose(x.grad(), dh * w.detach() * 10.0));
  EXPECT_EQ(hook_calls, 1);
  EXPECT_FALSE(w.grad().defined());
}

TEST(AutogradBackward, RetainGraphAccumulatesEachPass) {
  Tensor x = vec(kX, {3}).requires_grad_();
  const Tensor y = sum(exp(x));
  autograd::backward({y}, {}, true);
  autograd::backward({y}, {scalar(0.5, DType::F64)});
  EXPECT_TRUE(AllClose(x.grad(), exp(x.detach()) * 1.5));
  const std::string msg = error_of([&] { autograd::backward({y}); });
  EXPECT_NE(msg.find("was freed by an earlier backward()"), std::string::npos) << msg;
}

TEST(AutogradBackward, PyTorchsErrors) {
  Tensor x = vec(kX, {3}).requires_grad_();
  const auto message = [](const std::string& m) { return m.substr(0, m.find(" at ")); };
  EXPECT_EQ(message(error_of([&] { autograd::backward({x * 2.0}); })),
            "autograd::backward: grad can be implicitly created only for scalar outputs");
  const Tensor plain = vec(kX, {3});
  EXPECT_EQ(message(error_of([&] { autograd::backward({sum(x)}, {}, {}, false, {plain}); })),
            "autograd::backward: One of the differentiated Tensors does not require grad");
  EXPECT_FALSE(x.grad().defined());
}

}  // namespace
}  // namespace lt
