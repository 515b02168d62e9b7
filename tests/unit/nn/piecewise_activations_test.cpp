// ReLU6, Hardtanh, Hardswish, Hardsigmoid, ELU, Softplus and Mish: values and gradients against
// PyTorch 1.13's, at the bounds, the kinks and the threshold switch too, f32 overflow, lazy
// against eager, the layers' text and bad arguments. Central differences away from the kinks:
// tests/grad/composite_ops_test.cpp.
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
using Fn = std::function<Tensor(const Tensor&)>;

// The kinks of hardswish and hardsigmoid (-3, 3) and elu (0) among smooth points.
const V kX = {-4.0, -3.0, -1.5, 0.0, 0.5, 3.0, 4.5};

Tensor t(const V& v) { return from_vector<double>(v, {static_cast<int64_t>(v.size())}); }

/// f(x) and d sum(f(x)) / dx, in f64.
std::pair<V, V> value_and_grad(const Fn& f, const V& at) {
  Tensor x = t(at).requires_grad_();
  const Tensor y = f(x);
  sum(y).backward();
  return {values(y), values(x.grad())};
}

void expect_pytorchs(const Fn& f, const V& at, const V& want_y, const V& want_g) {
  const auto [y, g] = value_and_grad(f, at);
  EXPECT_TRUE(AllClose(t(y), t(want_y), 1e-15, 1e-14)) << ::testing::PrintToString(y);
  EXPECT_TRUE(AllClose(t(g), t(want_g), 1e-15, 1e-14)) << ::testing::PrintToString(g);
}

// F.hardswish(x) on kX in f64 and torch.autograd.grad of its sum: the slope at -3 is -1/2 and at
// 3 is 3/2 (the middle piece's, PyTorch's hardswish_backward).
TEST(PiecewiseActivations, HardswishGivesPyTorchsValuesAndKinks) {
  nn::Hardswish layer;
  expect_pytorchs([&](const Tensor& x) { return layer.forward(x); }, kX,
                  {-0.0, -0.0, -0.375, 0.0, 0.2916666666666667, 3.0, 4.5},
                  {0.0, -0.5, 0.0, 0.5, 0.6666666666666666, 1.5, 1.0});
}

// F.hardsigmoid(x) on kX: no slope at the kinks. PyTorch's f64 kernel multiplies by the f32
// constant 1/6 (its gradient inside is 0.1666666716337204); here it is 1/6.
TEST(PiecewiseActivations, HardsigmoidGivesPyTorchsValuesAndKinks) {
  nn::Hardsigmoid layer;
  const double s = 1.0 / 6;
  expect_pytorchs([&](const Tensor& x) { return layer.forward(x); }, kX,
                  {0.0, 0.0, 0.25, 0.5, 0.5833333333333334, 1.0, 1.0}, {0, 0, s, s, s, 0, 0});
}

// F.relu6, F.hardtanh and F.hardtanh(x, -2, 0.5) on points at and beside their bounds: no
// slope at a bound itself (PyTorch's hardtanh_backward; clamp's would be 1 there).
TEST(PiecewiseActivations, Relu6AndHardtanhGivePyTorchsValuesAndBounds) {
  const V x = {-4.0, -1.0, -0.5, 0.0, 0.5, 1.0, 6.0, 7.0};
  nn::ReLU6 relu6;
  nn::Hardtanh unit, shifted(-2, 0.5);
  expect_pytorchs([&](const Tensor& v) { return relu6.forward(v); }, x,
                  {0.0, 0.0, 0.0, 0.0, 0.5, 1.0, 6.0, 6.0}, {0, 0, 0, 0, 1, 1, 0, 0});
  expect_pytorchs([&](const Tensor& v) { return unit.forward(v); }, x,
                  {-1.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.0, 1.0}, {0, 0, 1, 1, 1, 0, 0, 0});
  expect_pytorchs([&](const Tensor& v) { return shifted.forward(v); }, x,
                  {-2.0, -1.0, -0.5, 0.0, 0.5, 0.5, 0.5, 0.5}, {0, 1, 1, 1, 0, 0, 0, 0});
  EXPECT_TRUE(std::isnan(values(hardtanh(t({NAN})))[0]));
}

// F.elu(x) and F.elu(x, 0.5) on kX: the slope at 0 is alpha (the x <= 0 piece).
TEST(PiecewiseActivations, EluGivesPyTorchsValuesAndKink) {
  nn::ELU one, half(0.5);
  expect_pytorchs([&](const Tensor& x) { return one.forward(x); }, kX,
                  {-0.9816843611112658, -0.950212931632136, -0.7768698398515702, 0.0, 0.5, 3.0,
                   4.5},
                  {0.01831563888873418, 0.049787068367863944, 0.22313016014842982, 1.0, 1.0, 1.0,
                   1.0});
  expect_pytorchs([&](const Tensor& x) { return half.forward(x); }, kX,
                  {-0.4908421805556329, -0.475106465816068, -0.3884349199257851, 0.0, 0.5, 3.0,
                   4.5},
                  {0.00915781944436709, 0.024893534183931972, 0.11156508007421491, 0.5, 1.0, 1.0,
                   1.0});
  // expm1: elu(-1e-8) is -1e-8 in f32 (PyTorch 1.13's exp(x) - 1 rounds it to 0).
  EXPECT_FLOAT_EQ(elu(from_vector<float>({-1e-8f}, {1})).item<float>(), -1e-8f);
}

// F.softplus(x) on kX; F.softplus(x, beta=2, threshold=3) on [-1, 0.5, 1, 1.5, 2]: beta x = 3 at
// 1.5 takes the log form, 4 at 2 the identity (gradient 1).
TEST(PiecewiseActivations, SoftplusGivesPyTorchsValuesAndThreshold) {
  nn::Softplus layer, steep(2, 3);
  expect_pytorchs([&](const Tensor& x) { return layer.forward(x); }, kX,
                  {0.018149927917809738, 0.04858735157374206, 0.2014132779827524,
                   0.6931471805599453, 0.9740769841801067, 3.048587351573742, 4.511047744848594},
                  {0.017986209962091555, 0.04742587317756679, 0.18242552380635632, 0.5,
                   0.6224593312018546, 0.9525741268224333, 0.9890130573694068});
  expect_pytorchs([&](const Tensor& x) { return steep.forward(x); }, {-1.0, 0.5, 1.0, 1.5, 2.0},
                  {0.06346400552148625, 0.6566308437591114, 1.0634640055214863, 1.524293675786871,
                   2.0},
                  {0.11920292202211755, 0.7310585786300049, 0.8807970779778824, 0.9525741268224333,
                   1.0});
  // F.softplus at the default threshold: 20 itself takes the log form.
  expect_pytorchs([&](const Tensor& x) { return layer.forward(x); }, {19, 20, 20.5, 30, 100},
                  {19.000000005602796, 20.000000002061153, 20.5, 30.0, 100.0},
                  {0.9999999943972036, 0.9999999979388464, 1.0, 1.0, 1.0});
}

// F.mish(x) on kX and past the threshold.
TEST(PiecewiseActivations, MishGivesPyTorchsValues) {
  nn::Mish layer;
  const Fn f = [&](const Tensor& x) { return layer.forward(x); };
  expect_pytorchs(f, kX,
                  {-0.07259174079202535, -0.1456474612756246, -0.29809974216680674, 0.0,
                   0.3752452113048951, 2.9865350049679575, 4.498913714953316},
                  {-0.05377320979348033, -0.09339311453232084, -0.06409781589225869, 0.6,
                   0.8864243753577272, 1.0211069109294435, 1.0019070441688076});
  const auto [y, g] = value_and_grad(f, {19, 20, 20.5, 30, 100});
  EXPECT_TRUE(AllClose(t(y), t({18.999999999999996, 20.0, 20.5, 30.0, 100.0}), 0, 1e-15));
  EXPECT_TRUE(AllClose(t(g), t({1.000000000000004, 1.0, 1.0, 1.0, 1.0}), 0, 1e-12));
}

// F.mish, F.elu and F.softplus of f32 [100, 1000], where exp overflows in the branch not taken:
// values x and gradients 1 (not 0 * inf = NaN), as PyTorch's.
TEST(PiecewiseActivations, OverflowInTheBranchNotTakenGivesFiniteGradients) {
  for (const Fn& f : std::vector<Fn>{[](const Tensor& x) { return mish(x); },
                                     [](const Tensor& x) { return elu(x); },
                                     [](const Tensor& x) { return softplus(x); }}) {
    Tensor x = from_vector<float>({100, 1000}, {2}).requires_grad_();
    const Tensor y = f(x);
    sum(y).backward();
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{100, 1000}));
    EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{1, 1}));
  }
}

TEST(PiecewiseActivations, LazyMatchesEager) {
  nn::Sequential net(std::make_shared<nn::Hardswish>(), std::make_shared<nn::ELU>(0.7),
                     std::make_shared<nn::Softplus>(1.5, 2), std::make_shared<nn::Mish>(),
                     std::make_shared<nn::Hardsigmoid>(), std::make_shared<nn::Hardtanh>(0.1, 0.4),
                     std::make_shared<nn::ReLU6>());
  const Tensor x = from_vector<float>({-5, -3, -2.5, -1, 0, 0.5, 1, 2.5, 3, 6}, {2, 5});
  const std::vector<float> eager = net.forward(x).to_vector<float>();
  ModeGuard lazy(Mode::Lazy);
  const Tensor y = net.forward(x);
  mark_step();
  EXPECT_TRUE(AllClose(y, from_vector<float>(eager, {2, 5}), 1e-6, 1e-6));
}

// str(nn.Sequential(nn.Hardswish(), ...)) in PyTorch 1.13.
TEST(PiecewiseActivations, TextAndBadArguments) {
  nn::Sequential net(std::make_shared<nn::Hardswish>(), std::make_shared<nn::Hardsigmoid>(),
                     std::make_shared<nn::ELU>(), std::make_shared<nn::ELU>(0.5),
                     std::make_shared<nn::Softplus>(), std::make_shared<nn::Softplus>(2, 10.5),
                     std::make_shared<nn::Mish>(), std::make_shared<nn::ReLU6>(),
                     std::make_shared<nn::Hardtanh>(), std::make_shared<nn::Hardtanh>(-2, 0.5));
  EXPECT_EQ(net.str(),
            "Sequential(\n"
            "  (0): Hardswish()\n"
            "  (1): Hardsigmoid()\n"
            "  (2): ELU(alpha=1.0)\n"
            "  (3): ELU(alpha=0.5)\n"
            "  (4): Softplus(beta=1, threshold=20)\n"
            "  (5): Softplus(beta=2, threshold=10.5)\n"
            "  (6): Mish()\n"
            "  (7): ReLU6()\n"
            "  (8): Hardtanh(min_val=-1.0, max_val=1.0)\n"
            "  (9): Hardtanh(min_val=-2.0, max_val=0.5)\n"
            ")");
  EXPECT_EQ(error_of([] { nn::Hardtanh(1, 0); }),
            "Hardtanh: max_val (0) must be greater than min_val (1)");
  EXPECT_EQ(error_of([] { nn::ELU{INFINITY}; }), "ELU: alpha = inf is not finite");
  EXPECT_EQ(error_of([] { nn::Softplus(0); }), "Softplus: beta = 0 is not a finite nonzero number");
  EXPECT_EQ(error_of([] { nn::Softplus(1, std::nan("")); }), "Softplus: threshold is NaN");
  const Tensor ints = from_vector<int64_t>({1, 2}, {2});
  for (const auto& [name, f] : std::vector<std::pair<std::string, Fn>>{
           {"hardswish", [](const Tensor& x) { return hardswish(x); }},
           {"hardsigmoid", [](const Tensor& x) { return hardsigmoid(x); }},
           {"elu", [](const Tensor& x) { return elu(x); }},
           {"softplus", [](const Tensor& x) { return softplus(x); }},
           {"mish", [](const Tensor& x) { return mish(x); }},
           {"hardtanh", [](const Tensor& x) { return hardtanh(x); }},
           {"relu6", [](const Tensor& x) { return relu6(x); }}}) {
    const std::string e = error_of([&] { f(ints); });
    EXPECT_EQ(e.substr(0, e.find(" at ")), name + ": needs a float operand (operands: i64[2])");
    const std::string u = error_of([&] { f(Tensor()); });
    EXPECT_EQ(u.substr(0, u.find(" at ")),
              name + ": operand is an undefined tensor (operands: undefined)");
  }
}

}  // namespace
}  // namespace lt
