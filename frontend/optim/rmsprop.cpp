// torch.optim.RMSprop (PyTorch 1.13's algorithm), sync-free.
//
// PyTorch's momentum buffer starts as zeros (no first-step rule, unlike SGD's), so the state
// created at construction is already PyTorch's; `step` counts updates, as PyTorch's state does,
// and enters no formula.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/optim/option_text.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

/// Messages start with the option's name (load_state_dict puts the key's prefix before it).
void check(const RMSpropOptions& o) {
  const auto nonneg = [](const char* what, double v) {
    if (!(v >= 0)) throw Error(fmt::format("{} must be >= 0, got {}", what, v));
  };
  nonneg("lr", o.lr);
  nonneg("alpha", o.alpha);
  nonneg("eps", o.eps);
  nonneg("weight_decay", o.weight_decay);
  nonneg("momentum", o.momentum);
}

}  // namespace

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions options, Loc loc)
    : RMSprop(std::vector<ParamGroup<RMSpropOptions>>{{std::move(params), options}}, loc) {}

RMSprop::RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups, Loc loc)
    : OptimizerOf("RMSprop", std::move(groups), loc) {
  init(loc);
}

void RMSprop::check_options(size_t group) const { check(options_[group]); }

std::vector<std::string> RMSprop::slot_names(size_t group) const {
  const RMSpropOptions& o = options_[group];
  std::vector<std::string> names = {"square_avg"};
  if (o.momentum != 0) names.push_back("momentum_buffer");
  if (o.centered) names.push_back("grad_avg");
  names.push_back("step");
  return names;
}

void RMSprop::update(size_t group, const Tensor& skip) {
  const RMSpropOptions& o = options_[group];
  const std::vector<std::string> names = slot_names(group);
  const auto slot = [&](std::string_view name) {
    return static_cast<size_t>(std::ranges::find(names, name) - names.begin());
  };
  const auto s = [&](const char* name, double value, DType dtype) {
    return scalar(group, name, value, dtype);
  };
  for (Cohort& c : cohorts(group)) {
    for (size_t i : c.params) {
      Tensor& p = param(group, i);
      const DType dt = p.dtype();
      Tensor g = p.grad();
      if (o.weight_decay != 0) g = g + p * s("weight_decay", o.weight_decay, dt);
      const Tensor alpha = s("alpha", o.alpha, dt), one_minus_alpha = s("1-alpha", 1 - o.alpha, dt);
      Tensor& square_avg = state(group, i, slot("square_avg"));
      const Tensor sq = square_avg * alpha + one_minus_alpha * g * g;
      Tensor avg;
      if (o.centered) {
        Tensor& grad_avg = state(group, i, slot("grad_avg"));
        const Tensor ga = grad_avg * alpha + g * one_minus_alpha;
        avg = sqrt(sq - ga * ga);
        assign(grad_avg, ga, skip);
      } else {
        avg = sqrt(sq);
      }
      avg = avg + s("eps", o.eps, dt);
      const Tensor lr = s("lr", o.lr, dt);
      if (o.momentum != 0) {
        Tensor& buf = state(group, i, slot("momentum_buffer"));
        const Tensor b = buf * s("momentum", o.momentum, dt) + g / avg;
        assign(buf, b, skip);
        assign(p, p - b * lr, skip);
      } else {
        assign(p, p - lr * g / avg, skip);
      }
      assign(square_avg, sq, skip);
    }
    assign(c.step, c.step + 1.0, skip);
  }
}

StringDict RMSprop::options_text(size_t group) const {
  const RMSpropOptions& o = options_[group];
  return {{"lr", number_text(o.lr)},
          {"alpha", number_text(o.alpha)},
          {"eps", number_text(o.eps)},
          {"weight_decay", number_text(o.weight_decay)},
          {"momentum", number_text(o.momentum)},
          {"centered", bool_text(o.centered)}};
}

void RMSprop::set_options_text(size_t group, const StringDict& text) {
  RMSpropOptions o;
  o.lr = read_number(text, "lr");
  o.alpha = read_number(text, "alpha");
  o.eps = read_number(text, "eps");
  o.weight_decay = read_number(text, "weight_decay");
  o.momentum = read_number(text, "momentum");
  o.centered = read_bool(text, "centered");
  check(o);
  options_[group] = o;
}

}  // namespace lt::optim
