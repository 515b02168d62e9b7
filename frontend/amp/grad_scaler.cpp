// torch.cuda.amp.GradScaler (PyTorch 2's algorithm) with every decision made in the graph.
//
// PyTorch keeps found_inf and the scale on the device too, but its step() reads found_inf on the
// host to decide whether to call optimizer.step(). Here found_inf becomes the optimizer's `skip`
// (a `where` in each assignment), so neither the skip nor the scale's update waits on a value,
// and a step with an overflow runs the same graph as any other.
#include <fmt/format.h>

#include <utility>

#include "frontend/amp/option_check.h"
#include "frontend/optim/step_scalars.h"
#include "lt/amp.h"
#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt::amp {
namespace {

/// Multiplies every gradient of `opt` by 1 / scale in place and returns a 0-d f32 tensor: 1 when
/// any of them holds an inf or NaN afterwards, else 0.
Tensor unscale_gradients(optim::Optimizer& opt, const Tensor& scale, const Loc& loc) {
  NoGradGuard no_grad;
  // 1 / scale in f64, then cast, as PyTorch computes inv_scale (exact for a power of 2).
  const Tensor inv64 = reciprocal(cast(scale, DType::F64));
  const Tensor inv32 = cast(inv64, DType::F32);
  Tensor found;
  for (size_t g = 0; g < opt.num_groups(); ++g) {
    for (const Tensor& p : opt.params(g)) {
      Tensor grad = p.grad();
      if (!grad.defined() || grad.numel() == 0) continue;
      grad.mul_(grad.dtype() == DType::F64 ? inv64 : inv32);  // shares the parameter's gradient
      // The unscaled values are checked: with a scale below 1 the division itself can overflow.
      Tensor bad = max(where(isfinite(grad), scalar_like(0, grad), 1.0));
      if (bad.dtype() != DType::F32) bad = cast(bad, DType::F32);
      found = found.defined() ? maximum(found, bad) : bad;
    }
  }
  if (!found.defined())
    throw Error(fmt::format(
        "GradScaler.unscale_: no parameter of the optimizer has a gradient (call backward() on "
        "the scaled loss first) at {}",
        location_str(loc)));
  // One rank's overflow skips the step on every rank, so replicas stay identical.
  if (dist::world_size() > 1) found = dist::all_reduce(found, dist::ReduceOp::Max, loc);
  return found;
}

}  // namespace

GradScaler::GradScaler(Options options, Loc loc)
    : options_(options), scalars_(std::make_unique<optim::StepScalars>()) {
  if (const std::string problem = option_problem(options_); !problem.empty())
    throw InputError(fmt::format("GradScaler: {} at {}", problem, location_str(loc)));
  ModeGuard eager(Mode::Eager);  // device data: every step's graph reads it as a parameter
  scale_ = scalar(options_.init_scale, DType::F32);
  growth_tracker_ = scalar(0, DType::I32);
}

GradScaler GradScaler::constant(double scale, Loc loc) {
  if (const std::string problem = scale_problem("scale", scale); !problem.empty())
    throw InputError(fmt::format("GradScaler::constant: {} at {}", problem, location_str(loc)));
  return GradScaler({.init_scale = scale, .dynamic = false}, loc);
}

GradScaler::GradScaler(GradScaler&&) noexcept = default;
GradScaler& GradScaler::operator=(GradScaler&&) noexcept = default;
GradScaler::~GradScaler() = default;

Tensor GradScaler::scale(const Tensor& loss, Loc loc) {
  if (!loss.defined() || (loss.dtype() != DType::F32 && loss.dtype() != DType::F64))
    throw Error(fmt::format("GradScaler.scale: the loss must be an f32 or f64 tensor, got {} at {}",
                            loss.defined() ? type_str(loss.type()) : "an undefined tensor",
                            location_str(loc)));
  if (!options_.enabled) return loss;
  return mul(loss, loss.dtype() == DType::F32 ? scale_ : cast(scale_, loss.dtype(), loc), loc);
}

void GradScaler::unscale_(optim::Optimizer& optimizer, Loc loc) {
  if (!options_.enabled) return;
  PerOptimizer& s = per_optimizer_[&optimizer];
  if (s.stage == Stage::Unscaled) return;  // idempotent: the gradients are unscaled already
  if (s.stage == Stage::Stepped)
    throw Error(fmt::format(
        "GradScaler.unscale_: step() was already called on this optimizer since the last "
        "update() at {}",
        location_str(loc)));
  s.found_inf = unscale_gradients(optimizer, scale_, loc);
  s.stage = Stage::Unscaled;
}

void GradScaler::step(optim::Optimizer& optimizer, Loc loc) {
  if (!options_.enabled) {
    optimizer.step({}, loc);
    return;
  }
  if (per_optimizer_[&optimizer].stage == Stage::Stepped)
    throw Error(fmt::format(
        "GradScaler.step: step() was already called on this optimizer since the last update() "
        "at {}",
        location_str(loc)));
  unscale_(optimizer, loc);
  PerOptimizer& s = per_optimizer_[&optimizer];
  optimizer.step(s.found_inf > 0.0, loc);
  s.stage = Stage::Stepped;
}

Tensor GradScaler::found_inf(const optim::Optimizer& optimizer, Loc loc) const {
  if (!options_.enabled) return zeros({}, DType::F32, loc);
  const auto it = per_optimizer_.find(&optimizer);
  if (it == per_optimizer_.end() || !it->second.found_inf.defined())
    throw Error(fmt::format(
        "GradScaler.found_inf: this optimizer was not unscaled or stepped since the last "
        "update() at {}",
        location_str(loc)));
  return it->second.found_inf;
}

void GradScaler::update(Loc loc) {
  if (!options_.enabled) return;
  Tensor found;
  for (const auto& [_, s] : per_optimizer_)
    if (s.found_inf.defined()) found = found.defined() ? maximum(found, s.found_inf) : s.found_inf;
  per_optimizer_.clear();
  if (!found.defined())
    throw Error(fmt::format(
        "GradScaler.update: no optimizer was unscaled or stepped since the last update() at {}",
        location_str(loc)));
  if (!options_.dynamic) return;
  NoGradGuard no_grad;
  const auto s = [&](const char* name, double value, DType dtype) {
    return scalars_->get(0, name, value, dtype);
  };
  const Tensor overflow = found > 0.0;
  const Tensor next = growth_tracker_ + 1;
  // >= rather than PyTorch's ==: the same while the tracker is below the interval, as update()
  // keeps it, and a tracker past it (a state loaded with a smaller interval) grows, not never.
  const Tensor grow = ge(next, s("growth_interval", options_.growth_interval, DType::I32));
  // The products in f64, then rounded to f32, as PyTorch's kernel computes them.
  const Tensor scale64 = cast(scale_, DType::F64);
  const Tensor grown =
      cast(scale64 * s("growth_factor", options_.growth_factor, DType::F64), DType::F32);
  const Tensor backed_off =
      cast(scale64 * s("backoff_factor", options_.backoff_factor, DType::F64), DType::F32);
  // A scale that would grow to inf stays where it is.
  const Tensor grown_or_kept = where(isfinite(grown), grown, scale_);
  scale_.copy_(where(overflow, backed_off, where(grow, grown_or_kept, scale_)), loc);
  growth_tracker_.copy_(where(overflow, 0, where(grow, 0, next)), loc);
}

void GradScaler::update(double new_scale, Loc loc) {
  if (!options_.enabled) return;
  if (const std::string problem = scale_problem("new_scale", new_scale); !problem.empty())
    throw InputError(fmt::format("GradScaler.update: {} at {}", problem, location_str(loc)));
  Tensor value;
  {
    ModeGuard eager(Mode::Eager);  // data the step reads, not a constant folded into its graph
    value = scalar(new_scale, DType::F32);
  }
  update(value, loc);
}

void GradScaler::update(const Tensor& new_scale, Loc loc) {
  if (!options_.enabled) return;
  if (!new_scale.defined() || new_scale.numel() != 1 || !is_float(new_scale.dtype()) ||
      new_scale.requires_grad())
    throw InputError(fmt::format(
        "GradScaler.update: new_scale should be a number or a 1-element float tensor with "
        "requires_grad=False, got {} at {}",
        new_scale.defined() ? type_str(new_scale.type()) +
                                  (new_scale.requires_grad() ? " requiring grad" : "")
                            : "an undefined tensor",
        location_str(loc)));
  NoGradGuard no_grad;
  const Tensor value = reshape(new_scale, {}, loc);
  scale_.copy_(value.dtype() == DType::F32 ? value : cast(value, DType::F32, loc), loc);
  per_optimizer_.clear();
}

Tensor GradScaler::get_scale() const {
  if (options_.enabled) return scale_;
  ModeGuard eager(Mode::Eager);
  return scalar(1.0, DType::F32);
}

}  // namespace lt::amp
