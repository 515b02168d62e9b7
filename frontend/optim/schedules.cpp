// Learning-rate schedules and the Scheduler that applies one to an optimizer.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "frontend/optim/option_text.h"
#include "lt/optim.h"

namespace lt::optim::sched {
namespace {

int64_t positive(int64_t v, const char* what) {
  if (v <= 0) throw Error(fmt::format("{} must be positive, got {}", what, v));
  return v;
}

double nonnegative(double v, const char* what) {
  if (!(v >= 0) || !std::isfinite(v))
    throw Error(fmt::format("{} must be a finite number >= 0, got {}", what, v));
  return v;
}

}  // namespace

Schedule::Schedule(std::function<double(int64_t)> factor, std::string kind)
    : factor_(std::move(factor)), kind_(std::move(kind)) {
  if (!factor_) throw Error(fmt::format("schedule {}: no factor function", kind_));
}

StepLR::StepLR(int64_t step_size, double gamma)
    : Schedule([n = positive(step_size, "StepLR: step_size"),
                gamma = nonnegative(gamma, "StepLR: gamma")](
                   int64_t t) { return std::pow(gamma, static_cast<double>(t / n)); },
               fmt::format("step(step_size={},gamma={})", step_size, number_text(gamma))) {}

namespace {
std::vector<int64_t> sorted_milestones(std::vector<int64_t> m) {
  for (int64_t v : m)
    if (v < 0) throw Error(fmt::format("MultiStepLR: milestone {} is negative", v));
  std::sort(m.begin(), m.end());
  return m;
}

std::string milestones_text(const std::vector<int64_t>& m) {
  return fmt::format("[{}]", fmt::join(sorted_milestones(m), ","));
}
}  // namespace

MultiStepLR::MultiStepLR(std::vector<int64_t> milestones, double gamma)
    : Schedule(
          [m = sorted_milestones(milestones),
           gamma = nonnegative(gamma, "MultiStepLR: gamma")](int64_t t) {
            const auto passed = std::upper_bound(m.begin(), m.end(), t) - m.begin();
            return std::pow(gamma, static_cast<double>(passed));
          },
          fmt::format("multistep(milestones={},gamma={})", milestones_text(milestones),
                      number_text(gamma))) {}

ExponentialLR::ExponentialLR(double gamma)
    : Schedule([gamma = nonnegative(gamma, "ExponentialLR: gamma")](
                   int64_t t) { return std::pow(gamma, static_cast<double>(t)); },
               fmt::format("exponential(gamma={})", number_text(gamma))) {}

CosineAnnealingLR::CosineAnnealingLR(int64_t t_max, double lrf)
    : Schedule(
          [t_max = positive(t_max, "CosineAnnealingLR: t_max"),
           lrf = nonnegative(lrf, "CosineAnnealingLR: lrf")](int64_t t) {
            const double x = static_cast<double>(std::min(t, t_max)) / static_cast<double>(t_max);
            return lrf + (1 - lrf) * (1 + std::cos(std::numbers::pi * x)) / 2;
          },
          fmt::format("cosine(t_max={},lrf={})", t_max, number_text(lrf))) {}

LambdaLR::LambdaLR(std::function<double(int64_t)> factor, std::string name)
    : Schedule(std::move(factor), std::move(name)) {}

LinearWarmup::LinearWarmup(int64_t steps, double start_factor)
    : LinearWarmup(steps, Schedule([](int64_t) { return 1.0; }, "constant"), start_factor) {}

LinearWarmup::LinearWarmup(int64_t steps, const Schedule& then, double start_factor)
    : Schedule(
          [steps = positive(steps, "LinearWarmup: steps"),
           start = nonnegative(start_factor, "LinearWarmup: start_factor"), then](int64_t t) {
            if (t >= steps) return then.factor(t - steps);
            return start + (1 - start) * static_cast<double>(t) / static_cast<double>(steps);
          },
          fmt::format("warmup(steps={},start_factor={})+{}", steps, number_text(start_factor),
                      then.kind())) {}

Scheduler::Scheduler(Optimizer& optimizer, Schedule schedule)
    : optimizer_(&optimizer), schedule_(std::move(schedule)) {
  for (size_t g = 0; g < optimizer.num_groups(); ++g) base_lrs_.push_back(optimizer.lr(g));
  apply();
}

void Scheduler::step() {
  ++t_;
  apply();
}

double Scheduler::lr(size_t group) const {
  if (group >= base_lrs_.size())
    throw Error(fmt::format("Scheduler: no parameter group {} (the optimizer has {})", group,
                            base_lrs_.size()));
  return base_lrs_[group] * schedule_.factor(t_);
}

void Scheduler::apply() {
  for (size_t g = 0; g < base_lrs_.size(); ++g) optimizer_->set_lr(g, lr(g));
}

StringDict Scheduler::state_dict(const std::string& prefix) const {
  return {{prefix + ".kind", schedule_.kind()},
          {prefix + ".last_step", std::to_string(t_)},
          {prefix + ".base_lrs", numbers_text(base_lrs_)}};
}

void Scheduler::load_state_dict(const StringDict& state, const std::string& prefix, Loc loc) {
  const auto fail = [&](const std::string& what) {
    throw Error(fmt::format("Scheduler.load_state_dict: {} at {}", what, location_str(loc)));
  };
  const auto kind = state.find(prefix + ".kind");
  if (kind == state.end()) fail(fmt::format("no {}.kind in the metadata", prefix));
  if (kind->second != schedule_.kind())
    fail(fmt::format("the state is of schedule \"{}\", this one is \"{}\"", kind->second,
                     schedule_.kind()));
  double t = 0;
  std::vector<double> base;
  try {
    t = read_number(state, prefix + ".last_step");
    base = read_numbers(state, prefix + ".base_lrs");
  } catch (const Error& e) {
    fail(e.what());
  }
  if (t < 0 || t != std::floor(t) || t > 9e15)
    fail(fmt::format("{}.last_step is {}, not a step count", prefix, t));
  if (base.size() != base_lrs_.size())
    fail(fmt::format("{}.base_lrs has {} rates, the optimizer {} groups", prefix, base.size(),
                     base_lrs_.size()));
  t_ = static_cast<int64_t>(t);
  base_lrs_ = std::move(base);
  apply();
}

}  // namespace lt::optim::sched
