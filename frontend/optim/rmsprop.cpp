// torch.optim.RMSprop (PyTorch 1.13's algorithm), sync-free.
//
// PyTorch's momentum buffer starts as zeros (no first-step rule, unlike SGD's), so the state
// created at construction is already PyTorch's; `step` counts updates, as PyTorch's state does,
// and enters no formula.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions options, Loc loc)
    : RMSprop(std::vector<ParamGroup<RMSpropOptions>>{{std::move(params), options}}, loc) {}

RMSprop::RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups, Loc loc)
    : OptimizerOf("RMSprop", std::move(groups), loc) {
  init(loc);
}

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

}  // namespace lt::optim
