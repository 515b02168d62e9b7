// ReduceLROnPlateau: a learning rate driven by a metric, as PyTorch 1.13's scheduler of that name.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "frontend/optim/option_text.h"
#include "lt/optim.h"

namespace lt::optim::sched {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options, Loc loc)
    : optimizer_(&optimizer), options_(std::move(options)) {
  const auto fail = [&](const std::string& what) {
    throw Error(fmt::format("ReduceLROnPlateau: {} at {}", what, location_str(loc)));
  };
  const PlateauOptions& o = options_;
  if (!(o.factor >= 0 && o.factor < 1))
    fail(fmt::format("factor must be in [0, 1), got {}", o.factor));
  if (o.patience < 0) fail(fmt::format("patience must be >= 0, got {}", o.patience));
  if (o.cooldown < 0) fail(fmt::format("cooldown must be >= 0, got {}", o.cooldown));
  if (!(o.threshold >= 0)) fail(fmt::format("threshold must be >= 0, got {}", o.threshold));
  if (!(o.eps >= 0)) fail(fmt::format("eps must be >= 0, got {}", o.eps));
  const size_t groups = optimizer.num_groups();
  if (o.min_lrs.size() > 1 && o.min_lrs.size() != groups)
    fail(fmt::format("min_lrs has {} rates, the optimizer {} groups", o.min_lrs.size(), groups));
  for (double m : o.min_lrs)
    if (!(m >= 0)) fail(fmt::format("min_lrs must be >= 0, got {}", m));
  if (o.min_lrs.empty()) options_.min_lrs = {0.0};
  if (options_.min_lrs.size() == 1) options_.min_lrs.assign(groups, options_.min_lrs[0]);
  best_ = o.mode == PlateauOptions::Mode::Min ? std::numeric_limits<double>::infinity()
                                              : -std::numeric_limits<double>::infinity();
}

bool ReduceLROnPlateau::is_better(double metric) const {
  const PlateauOptions& o = options_;
  const bool rel = o.threshold_mode == PlateauOptions::Threshold::Rel;
  if (o.mode == PlateauOptions::Mode::Min)
    return metric < (rel ? best_ * (1 - o.threshold) : best_ - o.threshold);
  return metric > (rel ? best_ * (o.threshold + 1) : best_ + o.threshold);
}

void ReduceLROnPlateau::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {  // bad epochs right after a reduction do not count
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > options_.patience) {
    for (size_t g = 0; g < optimizer_->num_groups(); ++g) {
      const double old_lr = optimizer_->lr(g);
      const double new_lr = std::max(old_lr * options_.factor, options_.min_lrs[g]);
      if (old_lr - new_lr > options_.eps) optimizer_->set_lr(g, new_lr);
    }
    cooldown_counter_ = options_.cooldown;
    num_bad_epochs_ = 0;
  }
}

void ReduceLROnPlateau::step(const Tensor& metric, Loc loc) {
  if (!metric.defined() || metric.numel() != 1)
    throw Error(fmt::format("ReduceLROnPlateau.step: the metric must be one value, got {} at {}",
                            metric.defined() ? type_str(metric.type()) : "an undefined tensor",
                            location_str(loc)));
  step(metric.item<double>(loc));
}

StringDict ReduceLROnPlateau::state_dict(const std::string& prefix) const {
  return {{prefix + ".best", number_text(best_)},
          {prefix + ".num_bad_epochs", std::to_string(num_bad_epochs_)},
          {prefix + ".cooldown_counter", std::to_string(cooldown_counter_)},
          {prefix + ".last_epoch", std::to_string(last_epoch_)}};
}

void ReduceLROnPlateau::load_state_dict(const StringDict& state, const std::string& prefix,
                                        Loc loc) {
  const auto fail = [&](const std::string& what) {
    throw Error(
        fmt::format("ReduceLROnPlateau.load_state_dict: {} at {}", what, location_str(loc)));
  };
  double best = 0;
  int64_t counts[3] = {};
  const char* names[3] = {".num_bad_epochs", ".cooldown_counter", ".last_epoch"};
  try {
    const auto it = state.find(prefix + ".best");
    if (it == state.end()) throw Error(fmt::format("{}.best is missing", prefix));
    // inf and -inf (no epoch yet) are the one non-finite values it may hold.
    if (it->second == "inf" || it->second == "-inf")
      best = it->second == "inf" ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity();
    else best = read_number(state, prefix + ".best");
    for (int k = 0; k < 3; ++k) {
      const double v = read_number(state, prefix + names[k]);
      if (v < 0 || v != std::floor(v) || v > 9e15)
        throw Error(fmt::format("{}{} is {}, not a count", prefix, names[k], v));
      counts[k] = static_cast<int64_t>(v);
    }
  } catch (const Error& e) {
    fail(e.what());
  }
  best_ = best;
  num_bad_epochs_ = counts[0];
  cooldown_counter_ = counts[1];
  last_epoch_ = counts[2];
}

}  // namespace lt::optim::sched
