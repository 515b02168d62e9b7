// Adam and AdamW against PyTorch 1.13's documented algorithms, computed in f64 by tests/support
// (RefAdam): bias correction, L2 vs decoupled weight decay, amsgrad, parameter groups.
#include <gtest/gtest.h>

#include "lt/lt.h"
#include "lt/optim.h"
#include "tests/support/optim_reference.h"

namespace lt::optim {
namespace {

using testing::grad_at;
using testing::Near;
using testing::RefAdam;
using testing::Vec;

Tensor param(const Vec& v) {
  return from_vector<double>(v, {static_cast<int64_t>(v.size())}).requires_grad_();
}
Tensor grad(const Vec& v) { return from_vector<double>(v, {static_cast<int64_t>(v.size())}); }

template <class Options>
RefAdam reference(const Options& o) {
  RefAdam r;
  r.lr = o.lr;
  r.beta1 = o.betas[0];
  r.beta2 = o.betas[1];
  r.eps = o.eps;
  r.weight_decay = o.weight_decay;
  r.amsgrad = o.amsgrad;
  r.decoupled = std::is_same_v<Options, AdamWOptions>;
  return r;
}

/// Gradients that shrink after the first steps, so amsgrad's maximum differs from the average.
Vec shrinking_grad(int t, size_t n) { return grad_at(t, n, t < 2 ? 3.0 : 0.2); }

template <class Opt, class Options>
void expect_matches_reference(const Options& o, int steps) {
  Vec expect = {0.5, -1.25, 2.0, 0.0, -0.75, 3.5};
  Tensor p = param(expect);
  Opt opt({p}, o);
  RefAdam ref = reference(o);
  for (int t = 0; t < steps; ++t) {
    const Vec g = shrinking_grad(t, expect.size());
    p.set_grad(grad(g));
    opt.step();
    ref.step(expect, g);
    ASSERT_TRUE(Near(p.to_vector<double>(), expect, 1e-13)) << "step " << t;
  }
  const TensorDict state = opt.state_dict().tensors;
  EXPECT_TRUE(Near(state.at("optim.0.0.exp_avg").to_vector<double>(), ref.m, 1e-14));
  EXPECT_TRUE(Near(state.at("optim.0.0.exp_avg_sq").to_vector<double>(), ref.v, 1e-14));
  if (o.amsgrad) {
    EXPECT_TRUE(Near(state.at("optim.0.0.max_exp_avg_sq").to_vector<double>(), ref.vmax, 1e-14));
  }
  EXPECT_EQ(state.at("optim.0.0.step").item<float>(), static_cast<float>(steps));
}

TEST(Adam, AHandComputedCase) {
  // Adam's first step moves every element by lr * sign(g) (up to eps): m_hat = g, v_hat = g^2.
  // Second step with the same g: m = (0.1 + 0.09) g, v = (0.001 + 0.000999) g^2, corrected by
  // 1 - 0.9^2 = 0.19 and 1 - 0.999^2 = 0.001999: m_hat = g, v_hat = g^2 again.
  Tensor p = param({1.0, -2.0});
  Adam opt({p}, {.lr = 0.1, .eps = 0});
  for (int t = 1; t <= 2; ++t) {
    p.set_grad(grad({0.5, -4.0}));
    opt.step();
    const Vec got = p.to_vector<double>();
    EXPECT_NEAR(got[0], 1.0 - 0.1 * t, 1e-15);
    EXPECT_NEAR(got[1], -2.0 + 0.1 * t, 1e-15);
  }
}

TEST(Adam, Defaults) { expect_matches_reference<Adam>(AdamOptions{}, 4); }

TEST(Adam, L2WeightDecayAndOtherBetas) {
  expect_matches_reference<Adam>(
      AdamOptions{.lr = 0.01, .betas = {0.8, 0.99}, .eps = 1e-6, .weight_decay = 0.1}, 5);
}

TEST(Adam, Amsgrad) {
  expect_matches_reference<Adam>(AdamOptions{.lr = 0.02, .weight_decay = 0.05, .amsgrad = true}, 6);
}

TEST(AdamW, DecoupledWeightDecay) {
  expect_matches_reference<AdamW>(AdamWOptions{.lr = 0.01, .weight_decay = 0.1}, 5);
}

TEST(AdamW, DefaultsDecayByOnePercent) {
  EXPECT_EQ(AdamWOptions{}.weight_decay, 1e-2);
  expect_matches_reference<AdamW>(AdamWOptions{}, 3);
}

TEST(AdamW, Amsgrad) {
  expect_matches_reference<AdamW>(
      AdamWOptions{.lr = 0.03, .betas = {0.5, 0.9}, .weight_decay = 0.2, .amsgrad = true}, 6);
}

// Adam's L2 and AdamW's decoupled decay differ: the same options give different parameters.
TEST(AdamW, DiffersFromAdamWithTheSameDecay) {
  Tensor a = param({1, 2}), b = param({1, 2});
  Adam adam({a}, {.lr = 0.1, .weight_decay = 0.5});
  AdamW adamw({b}, {.lr = 0.1, .weight_decay = 0.5});
  for (int t = 0; t < 2; ++t) {
    a.set_grad(grad({0.1, -0.2}));
    b.set_grad(grad({0.1, -0.2}));
    adam.step();
    adamw.step();
  }
  EXPECT_GT(std::abs(a.to_vector<double>()[0] - b.to_vector<double>()[0]), 1e-3);
}

TEST(AdamW, GroupsWithAndWithoutDecayAndTheirOwnRates) {
  const AdamWOptions decay{.lr = 0.01, .weight_decay = 0.1, .amsgrad = true};
  const AdamWOptions no_decay{.lr = 0.05, .weight_decay = 0};
  Vec ew = {1, -2, 3, 0.5}, eb = {0.1, -0.1};
  Tensor w = param(ew), b = param(eb);
  AdamW opt({{{w}, decay}, {{b}, no_decay}});
  RefAdam rw = reference(decay), rb = reference(no_decay);
  for (int t = 0; t < 5; ++t) {
    const Vec gw = shrinking_grad(t, 4), gb = grad_at(t + 5, 2);
    w.set_grad(grad(gw));
    // b has no gradient at step 2: its step count stays, so its bias correction lags w's.
    if (t == 2)
      b.zero_grad();
    else
      b.set_grad(grad(gb));
    opt.step();
    rw.step(ew, gw);
    if (t != 2) rb.step(eb, gb);
    ASSERT_TRUE(Near(w.to_vector<double>(), ew, 1e-13)) << t;
    ASSERT_TRUE(Near(b.to_vector<double>(), eb, 1e-13)) << t;
  }
  EXPECT_EQ(opt.state_dict().tensors.at("optim.1.0.step").item<float>(), 4.0f);
  EXPECT_EQ(opt.state_dict().tensors.count("optim.1.0.max_exp_avg_sq"), 0u);
}

TEST(Adam, F32FollowsTheReference) {
  const AdamOptions o{.lr = 0.01, .weight_decay = 0.01, .amsgrad = true};
  Vec expect = {0.5, -1.25, 2.0};
  Tensor p = from_vector<float>({0.5f, -1.25f, 2.0f}, {3}).requires_grad_();
  Adam opt({p}, o);
  RefAdam ref = reference(o);
  for (int t = 0; t < 6; ++t) {
    const Vec g = shrinking_grad(t, 3);
    p.set_grad(cast(grad(g), DType::F32));
    opt.step();
    ref.step(expect, g);
  }
  EXPECT_TRUE(Near(p.to_vector<double>(), expect, 2e-6));
}

TEST(Adam, SchedulesSetTheRateOfEachStep) {
  Vec expect = {1, -1};
  Tensor p = param(expect);
  Adam opt({p}, {.lr = 0.1});
  RefAdam ref = reference(AdamOptions{.lr = 0.1});
  for (int t = 0; t < 4; ++t) {
    const double lr = 0.1 / (1 + t);
    opt.set_lr(0, lr);
    ref.lr = lr;
    const Vec g = grad_at(t, 2);
    p.set_grad(grad(g));
    opt.step();
    ref.step(expect, g);
  }
  EXPECT_TRUE(Near(p.to_vector<double>(), expect, 1e-14));
}

// amsgrad turned on mid-run adds its slot (zeros: the maximum starts from the current average)
// and keeps the moments and step count.
TEST(Adam, AmsgradTurnedOnBetweenSteps) {
  Tensor p = param({1, 2});
  Adam opt({p}, {.lr = 0.1});
  p.set_grad(grad({0.5, -1}));
  opt.step();
  const Vec m = opt.state_dict().tensors.at("optim.0.0.exp_avg").to_vector<double>();
  opt.options(0).amsgrad = true;
  EXPECT_FALSE(opt.state_dict().tensors.contains("optim.0.0.max_exp_avg_sq"));  // until step()
  p.set_grad(grad({0, 0}));
  opt.step();
  const TensorDict s = opt.state_dict().tensors;
  EXPECT_EQ(s.at("optim.0.0.step").item<float>(), 2.0f);
  EXPECT_EQ(s.at("optim.0.0.exp_avg").to_vector<double>(), (Vec{0.9 * m[0], 0.9 * m[1]}));
  EXPECT_EQ(s.at("optim.0.0.max_exp_avg_sq").to_vector<double>(),
            s.at("optim.0.0.exp_avg_sq").to_vector<double>());
}

TEST(Adam, BadOptionsAreErrors) {
  Tensor p = param({1});
  try {
    Adam({p}, {.betas = {0.9, 1.0}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 50),
              "Adam: group 0: betas must be in [0, 1), got 0.9,1 ");
  }
  EXPECT_THROW(AdamW({p}, {.eps = -1}), Error);
}

}  // namespace
}  // namespace lt::optim
