// Learning-rate schedules against their closed forms (written here independently: products of
// gamma step by step, the cosine formula), the Scheduler driving an optimizer per step and per
// epoch, and its state round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "lt/lt.h"
#include "lt/optim.h"

namespace lt::optim::sched {
namespace {

std::vector<double> factors(const Schedule& s, int n) {
  std::vector<double> out;
  for (int t = 0; t < n; ++t) out.push_back(s.factor(t));
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& expect) {
  ASSERT_EQ(got.size(), expect.size());
  for (size_t t = 0; t < got.size(); ++t) EXPECT_NEAR(got[t], expect[t], 1e-15) << "t = " << t;
}

TEST(Schedules, StepLR) {
  expect_near(factors(StepLR(3, 0.5), 8), {1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25});
}

TEST(Schedules, MultiStepLRCountsRepeatedMilestonesTwice) {
  expect_near(factors(MultiStepLR({5, 2, 5}, 0.1), 7), {1, 1, 0.1, 0.1, 0.1, 0.001, 0.001});
}

TEST(Schedules, ExponentialLR) {
  std::vector<double> expect;
  double f = 1;
  for (int t = 0; t < 6; ++t, f *= 0.9) expect.push_back(f);
  expect_near(factors(ExponentialLR(0.9), 6), expect);
}

TEST(Schedules, CosineAnnealingEndsAtTheFloorAndStaysThere) {
  const CosineAnnealingLR s(10, 0.1);
  for (int t = 0; t <= 10; ++t)
    EXPECT_NEAR(s.factor(t), 0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * t / 10)), 1e-15);
  EXPECT_EQ(s.factor(0), 1.0);
  EXPECT_EQ(s.factor(10), 0.1);
  EXPECT_EQ(s.factor(25), 0.1);
}

TEST(Schedules, LinearWarmupThenAnyOther) {
  const LinearWarmup s(4, CosineAnnealingLR(6, 0.01), 0.2);
  expect_near(factors(s, 4), {0.2, 0.4, 0.6, 0.8});
  EXPECT_EQ(s.factor(4), 1.0);    // the cosine's t = 0
  EXPECT_EQ(s.factor(10), 0.01);  // its t_max
  EXPECT_EQ(s.kind(), "warmup(steps=4,start_factor=0.2)+cosine(t_max=6,lrf=0.01)");
  const LinearWarmup w(2);
  expect_near(factors(w, 4), {0, 0.5, 1, 1});
  expect_near(factors(LinearWarmup(2, StepLR(2, 0.5)), 6), {0, 0.5, 1, 1, 0.5, 0.5});
}

TEST(Schedules, LambdaLR) {
  const LambdaLR s([](int64_t t) { return 1.0 / static_cast<double>(1 + t); }, "inverse");
  expect_near(factors(s, 4), {1, 0.5, 1.0 / 3, 0.25});
  EXPECT_EQ(s.kind(), "inverse");
}

TEST(Schedules, BadSettingsAreErrors) {
  const auto message = [](auto make) -> std::string {
    try {
      make();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message([] { StepLR(0); }), "StepLR: step_size must be positive, got 0");
  EXPECT_EQ(message([] { CosineAnnealingLR(10, -0.5); }),
            "CosineAnnealingLR: lrf must be a finite number >= 0, got -0.5");
  EXPECT_EQ(message([] { MultiStepLR({3, -1}); }), "MultiStepLR: milestone -1 is negative");
  EXPECT_EQ(message([] { LinearWarmup(-2); }), "LinearWarmup: steps must be positive, got -2");
}

struct TwoGroups {
  Tensor w = zeros({2}).requires_grad_(), b = zeros({1}).requires_grad_();
  SGD opt{{{{w}, {.lr = 0.1}}, {{b}, {.lr = 0.01}}}};
};

TEST(Scheduler, SetsEachGroupsRatePerStep) {
  TwoGroups m;
  Scheduler s(m.opt, StepLR(2, 0.5));
  std::vector<double> seen0, seen1;
  for (int t = 0; t < 5; ++t) {
    seen0.push_back(m.opt.lr(0));
    seen1.push_back(m.opt.lr(1));
    EXPECT_EQ(s.lr(1), m.opt.lr(1));
    s.step();
  }
  expect_near(seen0, {0.1, 0.1, 0.05, 0.05, 0.025});
  expect_near(seen1, {0.01, 0.01, 0.005, 0.005, 0.0025});
  EXPECT_EQ(s.last_step(), 5);
}

TEST(Scheduler, SteppedPerEpoch) {
  TwoGroups m;
  Scheduler s(m.opt, CosineAnnealingLR(2, 0.1));  // 3 epochs: 1, 0.55, 0.1
  std::vector<double> seen;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int batch = 0; batch < 4; ++batch) seen.push_back(m.opt.lr(0));
    s.step();
  }
  std::vector<double> expect;
  for (double f : {1.0, 0.55, 0.1})
    for (int batch = 0; batch < 4; ++batch) expect.push_back(0.1 * f);
  expect_near(seen, expect);
}

TEST(Scheduler, StateRoundTrip) {
  TwoGroups a;
  const LinearWarmup schedule(3, CosineAnnealingLR(5, 0.05));
  Scheduler sa(a.opt, schedule);
  for (int t = 0; t < 4; ++t) sa.step();
  const StringDict state = sa.state_dict();
  EXPECT_EQ(state.at("sched.kind"), "warmup(steps=3,start_factor=0)+cosine(t_max=5,lrf=0.05)");
  EXPECT_EQ(state.at("sched.last_step"), "4");
  EXPECT_EQ(state.at("sched.base_lrs"), "0.1,0.01");

  TwoGroups b;
  b.opt.set_lr(0, 7);  // a different base: the state's wins
  Scheduler sb(b.opt, schedule);
  sb.load_state_dict(state);
  EXPECT_EQ(sb.last_step(), 4);
  EXPECT_EQ(b.opt.lr(0), a.opt.lr(0));
  EXPECT_EQ(b.opt.lr(1), a.opt.lr(1));
  for (int t = 0; t < 4; ++t) {
    sa.step();
    sb.step();
    EXPECT_EQ(b.opt.lr(0), a.opt.lr(0));
  }
}

TEST(Scheduler, LoadingAnotherScheduleOrBadTextIsAnError) {
  TwoGroups m;
  Scheduler s(m.opt, StepLR(2));
  const auto message = [&](const StringDict& d) -> std::string {
    try {
      s.load_state_dict(d);
    } catch (const Error& e) {
      const std::string t = e.what();
      return t.substr(0, t.rfind(" at "));
    }
    return "no error";
  };
  StringDict other = Scheduler(m.opt, ExponentialLR(0.5)).state_dict();
  EXPECT_EQ(message(other),
            "Scheduler.load_state_dict: the state is of schedule "
            "\"exponential(gamma=0.5)\", this one is \"step(step_size=2,gamma=0.1)\"");
  StringDict good = s.state_dict();
  StringDict bad = good;
  bad["sched.last_step"] = "x";
  EXPECT_EQ(message(bad),
            "Scheduler.load_state_dict: sched.last_step is \"x\", not a finite number");
  bad = good;
  bad["sched.base_lrs"] = "0.1";
  EXPECT_EQ(message(bad),
            "Scheduler.load_state_dict: sched.base_lrs has 1 rates, the optimizer 2 groups");
  EXPECT_EQ(message({}), "Scheduler.load_state_dict: no sched.kind in the metadata");
}

}  // namespace
}  // namespace lt::optim::sched
