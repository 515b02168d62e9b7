// ReduceLROnPlateau against the rates torch.optim.lr_scheduler.ReduceLROnPlateau (PyTorch
// 1.13.1) set for the same metrics, a resumed run against a straight one, and bad options.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "lt/lt.h"
#include "lt/optim.h"

namespace lt::optim::sched {
namespace {

using Rates = std::vector<std::pair<double, double>>;

const std::vector<double> kMetrics = {1.0,  0.9,  0.9,  0.95, 0.91, 0.89, 0.8999, 0.9, 0.7, 0.71,
                                      0.72, 0.73, 0.74, 0.75, 0.69, 0.7,  0.7,    0.7, 0.7, 0.7};

struct TwoGroups {
  Tensor p = zeros({1}).requires_grad_(), q = zeros({1}).requires_grad_();
  SGD opt{std::vector<ParamGroup<SGDOptions>>{{{p}, {.lr = 1.0}}, {{q}, {.lr = 0.05}}}};
};

Rates rates_for(const PlateauOptions& o) {
  TwoGroups r;
  ReduceLROnPlateau plateau(r.opt, o);
  Rates out;
  for (double m : kMetrics) {
    plateau.step(m);
    out.emplace_back(r.opt.lr(0), r.opt.lr(1));
  }
  return out;
}

// torch: ReduceLROnPlateau(opt, patience=1, factor=0.5, min_lr=[0.1, 0.01], cooldown=1).
TEST(ReduceLROnPlateau, MinModeWithCooldownAndFloorsGivesPyTorchsRates) {
  const Rates expect = {{1.0, 0.05},    {1.0, 0.05},    {1.0, 0.05},   {0.5, 0.025},
                        {0.5, 0.025},   {0.5, 0.025},   {0.5, 0.025},  {0.25, 0.0125},
                        {0.25, 0.0125}, {0.25, 0.0125}, {0.125, 0.01}, {0.125, 0.01},
                        {0.125, 0.01},  {0.1, 0.01},    {0.1, 0.01},   {0.1, 0.01},
                        {0.1, 0.01},    {0.1, 0.01},    {0.1, 0.01},   {0.1, 0.01}};
  EXPECT_EQ(rates_for({.factor = 0.5, .patience = 1, .cooldown = 1, .min_lrs = {0.1, 0.01}}),
            expect);
}

// torch: ReduceLROnPlateau(opt, mode='max', patience=2, threshold=0.05, threshold_mode='abs',
// factor=0.3); the metrics fall, so every third epoch reduces.
TEST(ReduceLROnPlateau, MaxModeWithAnAbsoluteThresholdGivesPyTorchsRates) {
  const Rates got = rates_for({.mode = PlateauOptions::Mode::Max,
                               .factor = 0.3,
                               .patience = 2,
                               .threshold = 0.05,
                               .threshold_mode = PlateauOptions::Threshold::Abs});
  // PyTorch's rates for group 0: 1, 0.3, 0.09, 0.027, 0.0081, 0.00243, 0.000729 (as
  // 0.0007289999999999999), each for three epochs; group 1's are 0.05 times those.
  std::vector<double> first;
  for (size_t e = 0; e < kMetrics.size(); ++e) first.push_back(std::pow(0.3, e / 3));
  ASSERT_EQ(got.size(), first.size());
  for (size_t k = 0; k < first.size(); ++k) {
    EXPECT_DOUBLE_EQ(got[k].first, first[k]) << k;
    EXPECT_DOUBLE_EQ(got[k].second, first[k] * 0.05) << k;
  }
}

// A run saved after 7 epochs and resumed in a fresh optimizer and scheduler sets the same rates
// as a straight one.
TEST(ReduceLROnPlateau, ResumedRunMatchesAStraightOne) {
  const PlateauOptions o{.factor = 0.5, .patience = 1, .cooldown = 2};
  const Rates straight = rates_for(o);
  TwoGroups first;
  ReduceLROnPlateau a(first.opt, o);
  for (int e = 0; e < 7; ++e) a.step(kMetrics[e]);
  const Checkpoint saved = first.opt.state_dict();
  const StringDict plateau_state = a.state_dict();
  TwoGroups resumed;
  ReduceLROnPlateau b(resumed.opt, o);
  resumed.opt.load_state_dict(saved);
  b.load_state_dict(plateau_state);
  EXPECT_EQ(b.last_epoch(), 7);
  for (size_t e = 7; e < kMetrics.size(); ++e) {
    b.step(kMetrics[e]);
    EXPECT_EQ(std::make_pair(resumed.opt.lr(0), resumed.opt.lr(1)), straight[e]) << e;
  }
}

TEST(ReduceLROnPlateau, StateBeforeAnyEpochRoundTrips) {
  TwoGroups r;
  ReduceLROnPlateau a(r.opt, {.mode = PlateauOptions::Mode::Max});
  const StringDict s = a.state_dict();
  EXPECT_EQ(s.at("plateau.best"), "-inf");
  ReduceLROnPlateau b(r.opt, {});
  b.load_state_dict(s);
  EXPECT_EQ(b.best(), -std::numeric_limits<double>::infinity());
}

// A tensor metric is read on the host; a lazy one is one counted sync.
TEST(ReduceLROnPlateau, ATensorMetricIsReadOnce) {
  TwoGroups r;
  ReduceLROnPlateau plateau(r.opt, {.patience = 0});
  plateau.step(scalar(2.0, DType::F32));
  ModeGuard lazy(Mode::Lazy);
  metrics::reset();
  plateau.step(scalar(1.0, DType::F32) * 3.0);  // worse than 2: reduce at once
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_DOUBLE_EQ(r.opt.lr(0), 0.1);
  EXPECT_EQ(plateau.best(), 2.0);
}

TEST(ReduceLROnPlateau, BadOptionsAndStatesAreErrors) {
  TwoGroups r;
  const auto error_of = [&](const PlateauOptions& o) {
    try {
      ReduceLROnPlateau p(r.opt, o);
    } catch (const Error& e) {
      const std::string m = e.what();
      return m.substr(0, m.find(" at "));
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of({.factor = 1}), "ReduceLROnPlateau: factor must be in [0, 1), got 1");
  EXPECT_EQ(error_of({.patience = -1}), "ReduceLROnPlateau: patience must be >= 0, got -1");
  EXPECT_EQ(error_of({.min_lrs = {0.1, 0.2, 0.3}}),
            "ReduceLROnPlateau: min_lrs has 3 rates, the optimizer 2 groups");
  EXPECT_EQ(error_of({.min_lrs = {-1}}), "ReduceLROnPlateau: min_lrs must be >= 0, got -1");
  ReduceLROnPlateau p(r.opt, {});
  EXPECT_THROW(p.step(zeros({2})), Error);
  StringDict s = p.state_dict();
  s["plateau.num_bad_epochs"] = "1.5";
  try {
    p.load_state_dict(s);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 81),
              "ReduceLROnPlateau.load_state_dict: plateau.num_bad_epochs is 1.5, not a count at ");
  }
  EXPECT_EQ(p.num_bad_epochs(), 0);
}

}  // namespace
}  // namespace lt::optim::sched
