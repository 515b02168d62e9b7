// GradScaler's semantics, in eager and lazy mode: a step whose gradients hold an inf or a NaN
// leaves parameters and optimizer state bit-identical and halves the scale; the next finite step
// is the step a run without the bad one takes; the scale grows after growth_interval finite steps;
// unscaled gradients are the unscaled loss's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <vector>

#include "lt/amp.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/all_close.h"
#include "tests/support/error_of.h"
#include "tests/support/scaled_training.h"

namespace lt::amp {
namespace {

using testing::Grad;
using testing::TinyModel;
using Make = std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>;

std::unique_ptr<optim::Optimizer> sgd(std::vector<Tensor> p) {
  return std::make_unique<optim::SGD>(
      std::move(p),
      optim::SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
}
std::unique_ptr<optim::Optimizer> adam(std::vector<Tensor> p) {
  return std::make_unique<optim::Adam>(std::move(p),
                                       optim::AdamOptions{.lr = 0.05, .amsgrad = true});
}

struct Case {
  const char* name;
  Make make;
  Mode mode;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Scaler : public ::testing::TestWithParam<Case> {
 protected:
  Mode mode() const { return GetParam().mode; }
  /// Steps on batches ks with the given gradients; mark_step after each in lazy mode.
  void run(TinyModel& m, optim::Optimizer& opt, GradScaler& scaler, const std::vector<int>& ks,
           const std::vector<Grad>& kinds) {
    ModeGuard guard(mode());
    for (size_t i = 0; i < ks.size(); ++i) {
      testing::scaled_step(m, opt, scaler, ks[i], kinds[i]);
      if (mode() == Mode::Lazy) mark_step();
    }
  }
  void expect_bad_step_is_skipped(Grad bad) {
    TinyModel m;
    auto opt = GetParam().make(m.params());
    GradScaler scaler;
    run(m, *opt, scaler, {0, 1}, {Grad::Finite, Grad::Finite});
    const auto before = testing::values(m, *opt);
    metrics::reset();
    run(m, *opt, scaler, {2}, {bad});
    EXPECT_EQ(metrics::counter("sync"), 0);
    EXPECT_EQ(testing::values(m, *opt), before);  // bit-identical, momentum and moments included
    EXPECT_EQ(scaler.get_scale().item<float>(), 32768.0f);
    EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), 0);

    // The next finite step is the one a run that never saw the bad step takes: the scales (2^16
    // there, 2^15 here) are powers of 2, so the unscaled gradients agree bit for bit.
    run(m, *opt, scaler, {3}, {Grad::Finite});
    TinyModel ref;
    auto ref_opt = GetParam().make(ref.params());
    GradScaler ref_scaler;
    run(ref, *ref_opt, ref_scaler, {0, 1, 3}, {Grad::Finite, Grad::Finite, Grad::Finite});
    EXPECT_EQ(testing::values(m, *opt), testing::values(ref, *ref_opt));
    EXPECT_NE(testing::values(m, *opt), before);  // it did move
    EXPECT_EQ(ref_scaler.get_scale().item<float>(), 65536.0f);
  }
};

TEST_P(Scaler, AnInfSkipsTheStepAndHalvesTheScale) { expect_bad_step_is_skipped(Grad::Inf); }
TEST_P(Scaler, ANaNSkipsTheStepAndHalvesTheScale) { expect_bad_step_is_skipped(Grad::NaN); }

TEST_P(Scaler, TheScaleGrowsAfterGrowthIntervalFiniteStepsInARow) {
  TinyModel m;
  auto opt = GetParam().make(m.params());
  GradScaler scaler({.init_scale = 8, .growth_interval = 3});
  const std::vector<Grad> kinds = {Grad::Finite, Grad::Finite, Grad::Finite, Grad::Finite,
                                   Grad::Inf,    Grad::Finite, Grad::Finite, Grad::Finite};
  const std::vector<float> want_scale = {8, 8, 16, 16, 8, 8, 8, 16};
  const std::vector<int32_t> want_tracker = {1, 2, 0, 1, 0, 1, 2, 0};
  for (size_t i = 0; i < kinds.size(); ++i) {
    run(m, *opt, scaler, {static_cast<int>(i)}, {kinds[i]});
    EXPECT_EQ(scaler.get_scale().item<float>(), want_scale[i]) << "step " << i;
    EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), want_tracker[i]) << "step " << i;
  }
}

TEST_P(Scaler, AStaticScaleNeverChangesAndStillSkips) {
  TinyModel m;
  auto opt = GetParam().make(m.params());
  GradScaler scaler = GradScaler::constant(1024);
  run(m, *opt, scaler, {0, 1, 2}, {Grad::Finite, Grad::Finite, Grad::Finite});
  const auto before = testing::values(m, *opt);
  run(m, *opt, scaler, {3}, {Grad::NaN});
  EXPECT_EQ(testing::values(m, *opt), before);
  EXPECT_EQ(scaler.get_scale().item<float>(), 1024.0f);
  EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), 0);
}

// PyTorch's update(new_scale): the scale set, in the graph for a tensor; the growth tracker
// kept; an inf step still skipped; then the dynamic rule goes on from there.
TEST_P(Scaler, UpdateWithANewScaleSetsItAndKeepsTheTracker) {
  TinyModel m;
  auto opt = GetParam().make(m.params());
  GradScaler scaler({.init_scale = 8, .growth_interval = 3});
  run(m, *opt, scaler, {0, 1}, {Grad::Finite, Grad::Finite});
  {
    ModeGuard guard(mode());
    testing::scaled_step(m, *opt, scaler, 2, Grad::Finite, /*update=*/false);
    scaler.update(64.0);
    if (mode() == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(scaler.get_scale().item<float>(), 64.0f);
  EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), 2);
  const auto before = testing::values(m, *opt);
  {
    ModeGuard guard(mode());
    testing::scaled_step(m, *opt, scaler, 3, Grad::Inf, /*update=*/false);
    scaler.update(full({1}, 4.0, DType::F64));
    if (mode() == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(testing::values(m, *opt), before);
  EXPECT_EQ(scaler.get_scale().item<float>(), 4.0f);
  run(m, *opt, scaler, {4}, {Grad::Finite});  // the tracker reaches 3: the scale grows
  EXPECT_EQ(scaler.get_scale().item<float>(), 8.0f);
  EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), 0);
}

// The real use: a scale so large that the scaled gradients overflow f32. Each such step is
// skipped and halves the scale, until the gradients fit and the steps go through.
TEST_P(Scaler, AnOverflowingScaleBacksOffUntilTheGradientsFit) {
  TinyModel m;
  auto opt = GetParam().make(m.params());
  GradScaler scaler({.init_scale = 0x1p127});
  ModeGuard guard(mode());
  int skipped = 0, taken = 0;
  for (int k = 0; k < 10; ++k) {
    const auto before = testing::values(m, *opt);
    const float scale = scaler.get_scale().item<float>();
    opt->zero_grad();
    // Gradients of 100 x the loss are well above 2 in places: times 2^127 they are inf.
    scaler.scale(m.loss(testing::scaled_batch(k)) * 100.0).backward();
    scaler.step(*opt);
    scaler.update();
    if (mode() == Mode::Lazy) mark_step();
    const float next = scaler.get_scale().item<float>();
    if (next == scale / 2) {
      ++skipped;
      EXPECT_EQ(testing::values(m, *opt), before) << "step " << k;
    } else {
      ++taken;
      EXPECT_EQ(next, scale) << "step " << k;
      EXPECT_NE(testing::values(m, *opt), before) << "step " << k;
    }
  }
  EXPECT_GE(skipped, 1);
  EXPECT_GE(taken, 3);
}

TEST_P(Scaler, UnscaledGradientsAreTheUnscaledLossGradients) {
  // 1000 is no power of 2: unscaling rounds, hence a tolerance.
  for (double init : {65536.0, 1000.0}) {
    TinyModel a, b;
    auto opt = GetParam().make(a.params());
    GradScaler scaler({.init_scale = init});
    ModeGuard guard(mode());
    scaler.scale(a.loss(testing::scaled_batch(0))).backward();
    scaler.unscale_(*opt);
    scaler.unscale_(*opt);  // idempotent
    b.loss(testing::scaled_batch(0)).backward();
    if (mode() == Mode::Lazy) mark_step();
    EXPECT_TRUE(testing::AllClose(a.w.grad(), b.w.grad(), 1e-7, 1e-6)) << init;
    EXPECT_TRUE(testing::AllClose(a.b.grad(), b.b.grad(), 1e-7, 1e-6)) << init;
    if (init == 65536.0) {
      EXPECT_EQ(a.w.grad().to_vector<float>(), b.w.grad().to_vector<float>());
    }
  }
}

// Clipping sees the true gradients after unscale_, and step() does not unscale them again.
TEST_P(Scaler, ClippingAfterUnscaleMatchesAnUnscaledRun) {
  TinyModel a, b;
  auto opt_a = GetParam().make(a.params());
  auto opt_b = GetParam().make(b.params());
  GradScaler scaler;
  ModeGuard guard(mode());
  for (int k = 0; k < 3; ++k) {
    opt_a->zero_grad();
    scaler.scale(a.loss(testing::scaled_batch(k))).backward();
    scaler.unscale_(*opt_a);
    optim::clip_grad_norm_(a.params(), 0.05);
    scaler.step(*opt_a);
    scaler.update();
    opt_b->zero_grad();
    b.loss(testing::scaled_batch(k)).backward();
    optim::clip_grad_norm_(b.params(), 0.05);
    opt_b->step();
    if (mode() == Mode::Lazy) mark_step();
  }
  EXPECT_TRUE(testing::AllClose(a.w, b.w, 1e-6, 1e-5));
  EXPECT_TRUE(testing::AllClose(a.b, b.b, 1e-6, 1e-5));
}

// found_inf is the skip decision of each step: summed over a run it counts the skipped steps,
// with no sync in lazy mode.
TEST_P(Scaler, FoundInfCountsTheSkippedSteps) {
  TinyModel m;
  auto opt = GetParam().make(m.params());
  GradScaler scaler = GradScaler::constant(1024);
  ModeGuard guard(mode());
  const std::vector<Grad> kinds = {Grad::Finite, Grad::Inf, Grad::Finite, Grad::NaN,
                                   Grad::Inf,    Grad::Finite};
  Tensor skipped = zeros({});
  metrics::reset();
  for (size_t k = 0; k < kinds.size(); ++k) {
    testing::scaled_step(m, *opt, scaler, static_cast<int>(k), kinds[k], /*update=*/false);
    const Tensor found = scaler.found_inf(*opt);
    skipped = skipped + found;
    scaler.update();
    if (mode() == Mode::Lazy) mark_step();
    EXPECT_EQ(found.item<float>(), kinds[k] == Grad::Finite ? 0.0f : 1.0f) << "step " << k;
  }
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(skipped.item<float>(), 3.0f);
}

TEST_P(Scaler, DisabledIsAPlainStep) {
  TinyModel a, b;
  auto opt_a = GetParam().make(a.params());
  auto opt_b = GetParam().make(b.params());
  GradScaler scaler({.enabled = false});
  ModeGuard guard(mode());
  for (int k = 0; k < 2; ++k) {
    testing::scaled_step(a, *opt_a, scaler, k, Grad::Finite);
    opt_b->zero_grad();
    b.loss(testing::scaled_batch(k)).backward();
    testing::inject(b, Grad::Finite);
    opt_b->step();
    if (mode() == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(testing::values(a, *opt_a), testing::values(b, *opt_b));
  EXPECT_EQ(scaler.get_scale().item<float>(), 1.0f);
  EXPECT_EQ(scaler.found_inf(*opt_a).item<float>(), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, Scaler,
                         ::testing::Values(Case{"SGDEager", sgd, Mode::Eager},
                                           Case{"SGDLazy", sgd, Mode::Lazy},
                                           Case{"AdamEager", adam, Mode::Eager},
                                           Case{"AdamLazy", adam, Mode::Lazy}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ScalerMisuse, OrderErrorsSayWhatWasAlreadyCalled) {
  using testing::error_of;
  TinyModel m;
  optim::SGD opt(m.params(), {.lr = 0.1});
  GradScaler scaler;
  EXPECT_THAT(error_of([&] { scaler.update(); }),
              ::testing::StartsWith("GradScaler.update: no optimizer was unscaled or stepped "
                                    "since the last update() at grad_scaler_test.cpp:"));
  EXPECT_THAT(error_of([&] { (void)scaler.found_inf(opt); }),
              ::testing::StartsWith("GradScaler.found_inf: this optimizer was not unscaled or "
                                    "stepped since the last update() at grad_scaler_test.cpp:"));
  EXPECT_THAT(error_of([&] { scaler.step(opt); }),
              ::testing::StartsWith("GradScaler.unscale_: no parameter of the optimizer has a "
                                    "gradient (call backward() on the scaled loss first) at "));
  scaler.scale(m.loss(testing::scaled_batch(0))).backward();
  scaler.step(opt);
  EXPECT_THAT(error_of([&] { scaler.step(opt); }),
              ::testing::StartsWith("GradScaler.step: step() was already called on this "
                                    "optimizer since the last update() at "));
  EXPECT_THAT(error_of([&] { scaler.unscale_(opt); }),
              ::testing::StartsWith("GradScaler.unscale_: step() was already called on this "
                                    "optimizer since the last update() at "));
  scaler.update();
  EXPECT_THAT(error_of([&] { scaler.update(0.0); }),
              ::testing::StartsWith("GradScaler.update: new_scale must be > 0 and finite in f32, "
                                    "got 0 at grad_scaler_test.cpp:"));
  EXPECT_THAT(error_of([&] { scaler.update(ones({2})); }),
              ::testing::StartsWith("GradScaler.update: new_scale should be a number or a "
                                    "1-element float tensor with requires_grad=False, got f32[2] "
                                    "at grad_scaler_test.cpp:"));
  EXPECT_THAT(error_of([&] { scaler.update(ones({1}).requires_grad_()); }),
              ::testing::StartsWith("GradScaler.update: new_scale should be a number or a "
                                    "1-element float tensor with requires_grad=False, got f32[1] "
                                    "requiring grad at "));
  EXPECT_EQ(scaler.get_scale().item<float>(), 65536.0f);  // the refused ones changed nothing
  EXPECT_THAT(error_of([&] { (void)scaler.scale(from_vector<int64_t>({1}, {})); }),
              ::testing::StartsWith("GradScaler.scale: the loss must be an f32 or f64 tensor, "
                                    "got i64[] at "));
}

}  // namespace
}  // namespace lt::amp
