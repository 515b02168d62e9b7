// SiLU, LeakyReLU, Sigmoid and Tanh: values and input gradients against PyTorch 1.13's and the
// host's, central differences, lazy against eager, their text and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;
using testing::values;
using V = std::vector<double>;

const V kX = {-3.0, -0.5, 0.0, 0.25, 2.0, 7.5};

Tensor t(const V& v) { return from_vector<double>(v, {static_cast<int64_t>(v.size())}); }

/// f(x) and d sum(f(x)) / dx, in f64.
std::pair<V, V> value_and_grad(const std::function<Tensor(const Tensor&)>& f, const V& at) {
  Tensor x = from_vector<double>(at, {static_cast<int64_t>(at.size())}).requires_grad_();
  const Tensor y = f(x);
  sum(y).backward();
  return {values(y), values(x.grad())};
}

// torch.nn.functional.silu and leaky_relu(x, 0.2) on kX, and their gradients (python3-torch
// 1.13.1); the gradient of leaky_relu at 0 is the slope, as PyTorch's.
TEST(ActivationLayers, SiluAndLeakyReluGivePyTorchsValuesAndGradients) {
  nn::SiLU silu_layer;
  const auto [sy, sg] = value_and_grad([&](const Tensor& x) { return silu_layer.forward(x); }, kX);
  EXPECT_TRUE(AllClose(t(sy),
                       t({-0.14227761953270035, -0.1887703343990727, 0.0, 0.14054412522144952,
                          1.7615941559557646, 7.4958541602230735}),
                       1e-15, 1e-15));
  EXPECT_TRUE(AllClose(t(sg),
                       t({-0.08810410601516962, 0.2600388126973482, 0.5, 0.6237100215701977,
                          1.0907842487848955, 1.0035907694083426}),
                       1e-14, 1e-14));
  nn::LeakyReLU leaky(0.2);
  const auto [ly, lg] = value_and_grad([&](const Tensor& x) { return leaky.forward(x); }, kX);
  EXPECT_EQ(ly, (V{-0.6000000000000001, -0.1, 0.0, 0.25, 2.0, 7.5}));
  EXPECT_EQ(lg, (V{0.2, 0.2, 0.2, 1.0, 1.0, 1.0}));
  EXPECT_EQ(values(nn::LeakyReLU().forward(from_vector<double>({-1.0}, {1}))), (V{-0.01}));
}

TEST(ActivationLayers, SigmoidAndTanhAreTheHostFunctions) {
  const auto [sy, sg] =
      value_and_grad([](const Tensor& x) { return nn::Sigmoid().forward(x); }, kX);
  const auto [ty, tg] = value_and_grad([](const Tensor& x) { return nn::Tanh().forward(x); }, kX);
  V s, ds, tv, dt;
  for (double x : kX) {
    s.push_back(1 / (1 + std::exp(-x)));
    ds.push_back(s.back() * (1 - s.back()));
    tv.push_back(std::tanh(x));
    dt.push_back(1 - tv.back() * tv.back());
  }
  EXPECT_TRUE(AllClose(t(sy), t(s), 1e-15, 1e-15));
  EXPECT_TRUE(AllClose(t(sg), t(ds), 1e-15, 1e-15));
  EXPECT_TRUE(AllClose(t(ty), t(tv), 1e-15, 1e-15));
  EXPECT_TRUE(AllClose(t(tg), t(dt), 1e-15, 1e-15));
}

// Away from leaky_relu's kink at 0.
TEST(ActivationLayers, GradientsMatchCentralDifferences) {
  const V at = {-2.5, -0.75, -0.1, 0.3, 1.25, 4.0};
  const std::function<Tensor(const Tensor&)> fs[] = {
      [](const Tensor& x) { return silu(x); },
      [](const Tensor& x) { return leaky_relu(x, 0.3); },
  };
  for (const auto& f : fs) {
    const V grad = value_and_grad(f, at).second;
    const V numeric = testing::central_differences(
        [&](const V& y) { return values(sum(f(from_vector<double>(y, {6}))))[0]; }, at,
        {.eps = 1e-6});
    for (size_t i = 0; i < at.size(); ++i) EXPECT_NEAR(grad[i], numeric[i], 1e-8) << i;
  }
}

TEST(ActivationLayers, LazyGivesEagersValues) {
  const Tensor x = from_vector<float>({-3, -0.5, 0, 0.25, 2, 7.5}, {2, 3});
  nn::Sequential net(std::make_shared<nn::LeakyReLU>(0.1), std::make_shared<nn::SiLU>(),
                     std::make_shared<nn::Tanh>(), std::make_shared<nn::Sigmoid>());
  const V eager = values(net.forward(x));
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = net.forward(x);
  mark_step();
  EXPECT_TRUE(AllClose(t(values(y)), t(eager), 1e-6, 1e-6));
}

TEST(ActivationLayers, TextAndBadArguments) {
  nn::Sequential net(std::make_shared<nn::LeakyReLU>(0.2), std::make_shared<nn::SiLU>(),
                     std::make_shared<nn::Sigmoid>(), std::make_shared<nn::Tanh>());
  EXPECT_EQ(net.str(),
            "Sequential(\n"
            "  (0): LeakyReLU(negative_slope=0.2)\n"
            "  (1): SiLU()\n"
            "  (2): Sigmoid()\n"
            "  (3): Tanh()\n"
            ")");
  EXPECT_EQ(error_of([] { nn::LeakyReLU(std::nan("")); }),
            "LeakyReLU: negative_slope = nan is not finite");
  const std::string undefined = error_of([] { leaky_relu(Tensor(), 0.1); });
  EXPECT_EQ(undefined.substr(0, undefined.find(" at ")),
            "leaky_relu: operand is an undefined tensor (operands: undefined)");
  const std::string silu_undefined = error_of([] { silu(Tensor()); });
  EXPECT_EQ(silu_undefined.substr(0, silu_undefined.find(" at ")),
            "silu: operand is an undefined tensor (operands: undefined)");
}

}  // namespace
}  // namespace lt
