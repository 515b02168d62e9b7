// RMSprop against PyTorch 1.13's documented algorithm, computed in f64 by tests/support
// (RefRMSprop), and against the values torch.optim.RMSprop itself gives.
#include <gtest/gtest.h>

#include <string>

#include "lt/lt.h"
#include "lt/optim.h"
#include "tests/support/error_of.h"
#include "tests/support/optim_reference.h"

namespace lt::optim {
namespace {

using testing::error_of;
using testing::expect_lazy_steps_match_eager;
using testing::f64_grad;
using testing::f64_param;
using testing::grad_at;
using testing::Near;
using testing::RefRMSprop;
using testing::Vec;

const Vec kStart = {0.5, -1.25, 2.0, 0.0, -0.75, 3.5};

void expect_matches_reference(const RMSpropOptions& o, int steps) {
  const auto [state, ref] = testing::step_beside_reference<RMSprop, RefRMSprop>(o, steps, kStart);
  EXPECT_TRUE(Near(state.at("optim.0.0.square_avg").to_vector<double>(), ref.square_avg, 1e-14));
  EXPECT_EQ(state.contains("optim.0.0.momentum_buffer"), o.momentum != 0);
  if (o.momentum != 0) {
    EXPECT_TRUE(Near(state.at("optim.0.0.momentum_buffer").to_vector<double>(), ref.buf, 1e-13));
  }
  EXPECT_EQ(state.contains("optim.0.0.grad_avg"), o.centered);
  if (o.centered) {
    EXPECT_TRUE(Near(state.at("optim.0.0.grad_avg").to_vector<double>(), ref.grad_avg, 1e-14));
  }
  EXPECT_EQ(state.at("optim.0.0.step").item<float>(), static_cast<float>(steps));
}

TEST(RMSprop, AHandComputedCase) {
  // First step, alpha 0.75, eps 0: square_avg = 0.25 g^2, so p moves by lr g / (0.5 |g|),
  // 2 lr against the gradient's sign.
  Tensor p = f64_param({1.0, -2.0});
  RMSprop opt({p}, {.lr = 0.1, .alpha = 0.75, .eps = 0});
  p.set_grad(f64_grad({0.5, -4.0}));
  opt.step();
  const Vec got = p.to_vector<double>();
  EXPECT_NEAR(got[0], 0.8, 1e-15);
  EXPECT_NEAR(got[1], -1.8, 1e-15);
}

TEST(RMSprop, Defaults) {
  const RMSpropOptions o;
  EXPECT_EQ(o.lr, 1e-2);
  EXPECT_EQ(o.alpha, 0.99);
  expect_matches_reference(o, 5);
}

TEST(RMSprop, WeightDecayAndMomentum) {
  expect_matches_reference({.lr = 0.02, .alpha = 0.9, .weight_decay = 0.1, .momentum = 0.8}, 6);
}

TEST(RMSprop, CenteredWithAndWithoutMomentum) {
  expect_matches_reference({.lr = 0.01, .alpha = 0.8, .eps = 1e-6, .centered = true}, 6);
  expect_matches_reference({.lr = 0.01, .eps = 1e-6, .momentum = 0.5, .centered = true}, 6);
}

// torch.optim.RMSprop(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1, momentum=0.5,
// centered=True) on these f64 values and grad_at's gradients, 5 steps (python3-torch 1.13.1).
TEST(RMSprop, GivesPyTorchsValues) {
  Tensor p = f64_param(kStart);
  RMSprop opt({p}, {.lr = 0.01,
                    .alpha = 0.9,
                    .eps = 1e-6,
                    .weight_decay = 0.1,
                    .momentum = 0.5,
                    .centered = true});
  for (int t = 0; t < 5; ++t) {
    p.set_grad(f64_grad(grad_at(t, kStart.size())));
    opt.step();
  }
  EXPECT_TRUE(Near(p.to_vector<double>(),
                   {0.33907783519523754, -1.2311175707304556, 2.1168926386117306,
                    -0.023011726572932784, -0.8513071203238733, 3.478903709989083},
                   1e-13));
  const TensorDict s = opt.state_dict().tensors;
  EXPECT_TRUE(Near(s.at("optim.0.0.square_avg").to_vector<double>(),
                   {0.18960606860722898, 0.2580369474074781, 0.19567245970251587,
                    0.19310897342166689, 0.2301222157449781, 0.11340327191242945},
                   1e-13));
  EXPECT_TRUE(Near(s.at("optim.0.0.momentum_buffer").to_vector<double>(),
                   {-0.0731773729966938, -3.123591045714133, 1.895948513765289, 2.532309936540242,
                    -1.916521982913693, -0.4246107859866005},
                   1e-13));
  EXPECT_TRUE(Near(s.at("optim.0.0.grad_avg").to_vector<double>(),
                   {0.11793820040842537, -0.1779673027657979, 0.016481292592280004,
                    0.14427524306615444, -0.0019501641177895592, -0.009528332207047194},
                   1e-13));
}

TEST(RMSprop, F32FollowsTheReference) {
  testing::expect_f32_follows_reference<RMSprop, RefRMSprop>(
      RMSpropOptions{.lr = 0.01, .momentum = 0.9, .centered = true});
}

// Lazy mode traces the same update: one graph for every step, eager's values.
TEST(RMSprop, LazyStepsMatchEagerAndCompileOnce) {
  expect_lazy_steps_match_eager<RMSprop>(
      RMSpropOptions{.lr = 0.01, .weight_decay = 0.05, .momentum = 0.5, .centered = true}, kStart);
}

// The message names the optimizer, the group and the option, where the optimizer was made.
TEST(RMSprop, BadOptionsAreErrors) {
  Tensor p = f64_param({1});
  const std::string line = std::to_string(__LINE__ + 1);
  EXPECT_EQ(error_of([&] { RMSprop({p}, {.alpha = -0.5}); }),
            "RMSprop: group 0: alpha must be >= 0, got -0.5 at optim_rmsprop_test.cpp:" + line);
  EXPECT_NE(error_of([&] { RMSprop({p}, {.momentum = -1}); }), "no error");
  EXPECT_NE(error_of([&] { RMSprop({p}, {.eps = -1}); }), "no error");
}

}  // namespace
}  // namespace lt::optim
