// Adagrad against PyTorch 1.13's documented algorithm, computed in f64 by tests/support
// (RefAdagrad), and against the values torch.optim.Adagrad itself gives.
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
using testing::RefAdagrad;
using testing::Vec;

const Vec kStart = {0.5, -1.25, 2.0, 0.0, -0.75, 3.5};

void expect_matches_reference(const AdagradOptions& o, int steps) {
  const auto [state, ref] = testing::step_beside_reference<Adagrad, RefAdagrad>(o, steps, kStart);
  EXPECT_TRUE(Near(state.at("optim.0.0.sum").to_vector<double>(), ref.sum, 1e-14));
  EXPECT_EQ(state.at("optim.0.0.step").item<float>(), static_cast<float>(steps));
}

TEST(Adagrad, AHandComputedCase) {
  // First step, eps 0: sum = g^2, so p -= lr * g / |g| = lr sign(g); the second step with the
  // same g and lr_decay 1 runs at lr / 2 and divides by sqrt(2) |g|.
  Tensor p = f64_param({1.0, -2.0});
  Adagrad opt({p}, {.lr = 0.1, .lr_decay = 1, .eps = 0});
  p.set_grad(f64_grad({0.5, -4.0}));
  opt.step();
  EXPECT_EQ(p.to_vector<double>(), (Vec{0.9, -1.9}));
  p.set_grad(f64_grad({0.5, -4.0}));
  opt.step();
  const Vec got = p.to_vector<double>();
  EXPECT_NEAR(got[0], 0.9 - 0.05 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(got[1], -1.9 + 0.05 / std::sqrt(2.0), 1e-15);
}

TEST(Adagrad, Defaults) {
  const AdagradOptions o;
  EXPECT_EQ(o.lr, 1e-2);
  EXPECT_EQ(o.eps, 1e-10);
  expect_matches_reference(o, 5);
}

TEST(Adagrad, DecayedRateWeightDecayAndAStartingSum) {
  expect_matches_reference(
      {.lr = 0.05, .lr_decay = 0.3, .weight_decay = 0.1, .initial_accumulator_value = 0.4}, 6);
}

// torch.optim.Adagrad(lr=0.1, lr_decay=0.05, weight_decay=0.1, initial_accumulator_value=0.2,
// eps=1e-6) on these f64 values and grad_at's gradients, 5 steps (python3-torch 1.13.1).
TEST(Adagrad, GivesPyTorchsValues) {
  Tensor p = f64_param(kStart);
  Adagrad opt({p}, {.lr = 0.1,
                    .lr_decay = 0.05,
                    .weight_decay = 0.1,
                    .initial_accumulator_value = 0.2,
                    .eps = 1e-6});
  for (int t = 0; t < 5; ++t) {
    p.set_grad(f64_grad(grad_at(t, kStart.size())));
    opt.step();
  }
  EXPECT_TRUE(Near(p.to_vector<double>(),
                   {0.32396522740287886, -1.195027391619838, 2.0957191746676687,
                    -0.05295599665758785, -0.8530070402957008, 3.471733778221978},
                   1e-13));
  EXPECT_TRUE(Near(opt.state_dict().tensors.at("optim.0.0.sum").to_vector<double>(),
                   {2.5430608114530484, 3.2271930954018786, 2.4188187200338995, 2.5535166753442433,
                    2.925027967540409, 1.7330777995844246},
                   1e-13));
}

// Each group starts its sums at its own value; a parameter without a gradient keeps its sum and
// its count, so its decayed rate lags.
TEST(Adagrad, GroupsStartTheirOwnSumsAndCounts) {
  const AdagradOptions a{.lr = 0.1, .lr_decay = 0.5, .initial_accumulator_value = 1};
  const AdagradOptions b{.lr = 0.2, .lr_decay = 0.5};
  Vec ew = {1, -2, 3}, eb = {0.1, -0.1};
  Tensor w = f64_param(ew), bias = f64_param(eb);
  Adagrad opt({{{w}, a}, {{bias}, b}});
  EXPECT_EQ(opt.state_dict().tensors.at("optim.0.0.sum").to_vector<double>(), (Vec{1, 1, 1}));
  EXPECT_EQ(opt.state_dict().tensors.at("optim.1.0.sum").to_vector<double>(), (Vec{0, 0}));
  RefAdagrad rw(a), rb(b);
  for (int t = 0; t < 4; ++t) {
    const Vec gw = grad_at(t, 3), gb = grad_at(t + 5, 2);
    w.set_grad(f64_grad(gw));
    if (t == 1) bias.zero_grad();
    else bias.set_grad(f64_grad(gb));
    opt.step();
    rw.step(ew, gw);
    if (t != 1) rb.step(eb, gb);
    ASSERT_TRUE(Near(w.to_vector<double>(), ew, 1e-13)) << t;
    ASSERT_TRUE(Near(bias.to_vector<double>(), eb, 1e-13)) << t;
  }
  EXPECT_EQ(opt.state_dict().tensors.at("optim.1.0.step").item<float>(), 3.0f);
}

TEST(Adagrad, F32FollowsTheReference) {
  testing::expect_f32_follows_reference<Adagrad, RefAdagrad>(
      AdagradOptions{.lr = 0.1, .lr_decay = 0.1, .initial_accumulator_value = 0.1});
}

// Lazy mode traces the same update: one graph for every step (the decayed rate is computed in
// it from the count), eager's values.
TEST(Adagrad, LazyStepsMatchEagerAndCompileOnce) {
  expect_lazy_steps_match_eager<Adagrad>(
      AdagradOptions{.lr = 0.1, .lr_decay = 0.2, .weight_decay = 0.05}, kStart);
}

// The message names the optimizer, the group and the option, where the optimizer was made.
TEST(Adagrad, BadOptionsAreErrors) {
  Tensor p = f64_param({1});
  const std::string line = std::to_string(__LINE__ + 1);
  EXPECT_EQ(error_of([&] { Adagrad({p}, {.initial_accumulator_value = -1}); }),
            "Adagrad: group 0: initial_accumulator_value must be >= 0, got -1 at "
            "optim_adagrad_test.cpp:" +
                line);
  EXPECT_NE(error_of([&] { Adagrad({p}, {.lr_decay = -0.1}); }), "no error");
  EXPECT_NE(error_of([&] { Adagrad({p}, {.eps = -1}); }), "no error");
}

}  // namespace
}  // namespace lt::optim
