// SGD against PyTorch 1.13's documented algorithm, computed in f64 by tests/support (RefSGD):
// weight decay, momentum with dampening (and PyTorch's first-step buffer rule), nesterov, groups.
#include <gtest/gtest.h>

#include "lt/lt.h"
#include "lt/optim.h"
#include "tests/support/optim_reference.h"

namespace lt::optim {
namespace {

using testing::grad_at;
using testing::Near;
using testing::RefSGD;
using testing::Vec;

Tensor param(const Vec& v) {
  return from_vector<double>(v, {static_cast<int64_t>(v.size())}).requires_grad_();
}
Tensor grad(const Vec& v) { return from_vector<double>(v, {static_cast<int64_t>(v.size())}); }

/// `steps` updates of one f64 parameter by SGD and by the reference, compared after each.
void expect_matches_reference(const SGDOptions& o, int steps) {
  Vec expect = {0.5, -1.25, 2.0, 0.0, -0.75};
  Tensor p = param(expect);
  SGD opt({p}, o);
  RefSGD ref(o);
  for (int t = 0; t < steps; ++t) {
    const Vec g = grad_at(t, expect.size());
    p.set_grad(grad(g));
    opt.step();
    ref.step(expect, g);
    ASSERT_TRUE(Near(p.to_vector<double>(), expect, 1e-14)) << "step " << t;
  }
}

TEST(SGD, AHandComputedCase) {
  // p = 1, g = 1 every step, lr 0.1, momentum 0.9: b = 1, 1.9, 2.71; p = 0.9, 0.71, 0.439.
  Tensor p = from_vector<double>({1.0}, {1}).requires_grad_();
  SGD opt({p}, {.lr = 0.1, .momentum = 0.9});
  const double expect[] = {0.9, 0.71, 0.439};
  for (double e : expect) {
    p.set_grad(from_vector<double>({1.0}, {1}));
    opt.step();
    EXPECT_NEAR(p.item<double>(), e, 1e-15);
  }
}

TEST(SGD, PlainWithWeightDecay) { expect_matches_reference({.lr = 0.1, .weight_decay = 0.05}, 4); }

TEST(SGD, MomentumWithDampening) {
  expect_matches_reference({.lr = 0.05, .momentum = 0.9, .dampening = 0.3, .weight_decay = 0.01},
                           5);
}

TEST(SGD, NesterovWithWeightDecay) {
  expect_matches_reference({.lr = 0.05, .momentum = 0.8, .weight_decay = 0.1, .nesterov = true}, 5);
}

// PyTorch's first step copies the gradient into the buffer: with dampening 0.5 the buffer after
// step 1 is g itself (PyTorch's rule), not (1 - 0.5) * g (what a zero buffer updated by the
// general rule would hold). Here the buffer is zeros plus a step count, and the graph selects g
// when the count is 0: bit-identical to the copy.
TEST(SGD, FirstStepBufferIsTheGradientItselfAsInPyTorch) {
  const Vec g = {0.5, -3.0, 1e-3, -0.0};
  Tensor p = param({1, 2, 3, 4});
  SGD opt({p}, {.lr = 0.1, .momentum = 0.9, .dampening = 0.5});
  p.set_grad(grad(g));
  opt.step();
  const TensorDict state = opt.state_dict().tensors;
  const Vec buf = state.at("optim.0.0.momentum_buffer").to_vector<double>();
  for (size_t k = 0; k < g.size(); ++k) {
    EXPECT_EQ(std::signbit(buf[k]), std::signbit(g[k])) << k;
    EXPECT_EQ(buf[k], g[k]) << k;
  }
  EXPECT_EQ(state.at("optim.0.0.step").item<float>(), 1.0f);
  // The second step uses the general rule: b = 0.9 * g + 0.5 * g2.
  const Vec g2 = {1, 1, 1, 1};
  p.set_grad(grad(g2));
  opt.step();
  const Vec buf2 = opt.state_dict().tensors.at("optim.0.0.momentum_buffer").to_vector<double>();
  for (size_t k = 0; k < g.size(); ++k) EXPECT_DOUBLE_EQ(buf2[k], 0.9 * g[k] + 0.5 * g2[k]) << k;
}

TEST(SGD, ParamGroupsHaveTheirOwnOptionsAndParamsWithoutAGradAreLeftAlone) {
  const SGDOptions decay{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01};
  const SGDOptions plain{.lr = 0.03};
  Vec ea = {1, -2, 3}, eb = {0.5, 0.25}, ec = {-1, 1};
  Tensor a = param(ea), b = param(eb), c = param(ec);
  SGD opt({{{a, c}, decay}, {{b}, plain}});
  RefSGD ra(decay), rc(decay), rb(plain);
  for (int t = 0; t < 4; ++t) {
    const Vec ga = grad_at(t, 3), gb = grad_at(t + 7, 2, 2.0), gc = grad_at(t + 3, 2, 0.5);
    a.set_grad(grad(ga));
    b.set_grad(grad(gb));
    // c has no gradient at step 1: it is left alone, its buffer and count too (so its second
    // update is PyTorch's first-step rule's "later" case, its first its first).
    if (t == 1)
      c.zero_grad();
    else
      c.set_grad(grad(gc));
    opt.step();
    ra.step(ea, ga);
    rb.step(eb, gb);
    if (t != 1) rc.step(ec, gc);
    ASSERT_TRUE(Near(a.to_vector<double>(), ea, 1e-14)) << t;
    ASSERT_TRUE(Near(b.to_vector<double>(), eb, 1e-14)) << t;
    ASSERT_TRUE(Near(c.to_vector<double>(), ec, 1e-14)) << t;
  }
  EXPECT_EQ(opt.state_dict().tensors.at("optim.0.1.step").item<float>(), 3.0f);
  EXPECT_EQ(opt.state_dict().tensors.count("optim.1.0.step"), 0u);  // no momentum, no state
}

TEST(SGD, F32FollowsTheReference) {
  testing::expect_f32_follows_reference<SGD, RefSGD>(
      SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true}, 5, 1e-6);
}

TEST(SGD, GradientsFromBackward) {
  // loss = sum(w * w * c) / 2, so grad = c * w: the update is w *= 1 - lr * c each step.
  Tensor w = param({1, -2, 4});
  const Tensor c = grad({0.5, 1, 2});
  SGD opt({w}, {.lr = 0.1});
  for (int t = 0; t < 3; ++t) {
    opt.zero_grad();
    (sum(w * w * c) / 2.0).backward();
    opt.step();
  }
  const double f[] = {0.95, 0.9, 0.8};
  const Vec got = w.to_vector<double>();
  const Vec w0 = {1, -2, 4};
  for (size_t k = 0; k < 3; ++k) EXPECT_NEAR(got[k], w0[k] * std::pow(f[k], 3), 1e-15);
}

TEST(SGD, ZeroGradDropsOrZeroesGradients) {
  Tensor p = param({1, 2});
  SGD opt({p}, {.lr = 0.1});
  p.set_grad(grad({3, 4}));
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(p.grad().defined());
  EXPECT_EQ(p.grad().to_vector<double>(), (Vec{0, 0}));
  opt.zero_grad();
  EXPECT_FALSE(p.grad().defined());
  opt.step();  // no gradient: nothing moves
  EXPECT_EQ(p.to_vector<double>(), (Vec{1, 2}));
}

// Options can change between steps (PyTorch's param_groups are mutable dicts): momentum turned
// on mid-run starts its buffer with PyTorch's first-step rule; invalid values are caught at
// the next step.
TEST(SGD, OptionsChangedBetweenSteps) {
  Vec expect = {1, -2, 0.5};
  Tensor p = param(expect);
  SGD opt({p}, {.lr = 0.1});
  RefSGD ref(opt.options(0));
  for (int t = 0; t < 5; ++t) {
    if (t == 2) {
      opt.options(0).momentum = 0.9;
      opt.options(0).dampening = 0.2;
      ref = RefSGD(opt.options(0));
    }
    const Vec g = grad_at(t, 3);
    p.set_grad(grad(g));
    opt.step();
    ref.step(expect, g);
    ASSERT_TRUE(Near(p.to_vector<double>(), expect, 1e-14)) << t;
  }
  EXPECT_EQ(opt.state_dict().tensors.at("optim.0.0.step").item<float>(), 3.0f);
  opt.options(0).lr = -0.5;
  try {
    opt.step();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 44), "SGD.step: group 0: lr must be >= 0, got -0.5");
  }
}

TEST(SGD, BadOptionsAndParametersAreErrors) {
  Tensor p = param({1});
  const auto message = [&](auto make) -> std::string {
    try {
      make();
    } catch (const Error& e) {
      std::string s = e.what();
      return s.substr(0, s.rfind(" at "));
    }
    return "no error";
  };
  EXPECT_EQ(message([&] { SGD({p}, {.lr = 0.1, .nesterov = true}); }),
            "SGD: group 0: nesterov needs momentum > 0 and dampening 0, got momentum 0 and "
            "dampening 0");
  EXPECT_EQ(message([&] { SGD({p}, {.lr = -1}); }), "SGD: group 0: lr must be >= 0, got -1");
  EXPECT_EQ(message([&] { SGD({p, p}); }), "SGD: parameter 1 of group 0 appears more than once");
  EXPECT_EQ(message([&] { SGD(std::vector<Tensor>{}); }), "SGD: no parameters to optimize");
  EXPECT_EQ(message([&] { SGD({from_vector<int64_t>({1}, {1})}); }),
            "SGD: parameter 0 of group 0 is i64[1]; optimizers update f32 or f64 tensors");
  SGD opt({p});
  EXPECT_EQ(message([&] { opt.step(from_vector<float>({1}, {})); }),
            "SGD.step: skip must be a 0-d bool tensor, got f32[]");
  EXPECT_EQ(message([&] { opt.lr(1); }), "SGD: no parameter group 1 (it has 1)");
}

}  // namespace
}  // namespace lt::optim
