// torch.nn.utils.clip_grad_norm_ and clip_grad_value_ (PyTorch 1.13), computed and applied in the
// graph.
#include <fmt/format.h>

#include <cmath>

#include "frontend/optim/step_scalars.h"
#include "lt/autograd.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

/// The norm_type-norm of one gradient (0-d).
Tensor norm(const Tensor& g, double p, StepScalars& s) {
  if (std::isinf(p)) return max(abs(g));
  if (p == 2) return sqrt(sum(g * g));
  if (p == 1) return sum(abs(g));
  return pow(sum(pow(abs(g), s.get(0, "p", p, g.dtype()))), s.get(0, "1/p", 1 / p, g.dtype()));
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type,
                       Loc loc) {
  if (!(norm_type > 0))
    throw Error(fmt::format("clip_grad_norm_: norm_type must be positive or infinity, got {} at {}",
                            norm_type, location_str(loc)));
  if (!(max_norm >= 0))
    throw Error(fmt::format("clip_grad_norm_: max_norm must be >= 0, got {} at {}", max_norm,
                            location_str(loc)));
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined())
      throw Error(fmt::format("clip_grad_norm_: parameter {} is an undefined tensor at {}", i,
                              location_str(loc)));
    if (Tensor g = params[i].grad(); g.defined()) {
      if (!grads.empty() && g.dtype() != grads[0].dtype())
        throw Error(fmt::format("clip_grad_norm_: gradients of different dtypes ({} and {}) at {}",
                                dtype_name(grads[0].dtype()), dtype_name(g.dtype()),
                                location_str(loc)));
      grads.push_back(g);
    }
  }
  if (grads.empty()) return zeros({}, DType::F32, loc);
  const bool inf = std::isinf(norm_type);
  StepScalars s;
  // The norm of the per-gradient norms, as PyTorch stacks and norms them.
  Tensor acc;
  for (const Tensor& g : grads) {
    const Tensor n = norm(g, norm_type, s);
    if (inf) {
      acc = acc.defined() ? maximum(acc, n) : n;
      continue;
    }
    const Tensor term = norm_type == 1   ? n
                        : norm_type == 2 ? n * n
                                         : pow(n, s.get(0, "p", norm_type, n.dtype()));
    acc = acc.defined() ? acc + term : term;
  }
  const DType dt = acc.dtype();
  const Tensor total = inf || norm_type == 1 ? acc
                       : norm_type == 2      ? sqrt(acc)
                                             : pow(acc, s.get(0, "1/p", 1 / norm_type, dt));
  const Tensor coef = s.get(0, "max_norm", max_norm, dt) / (total + s.get(0, "1e-6", 1e-6, dt));
  const Tensor clamped = minimum(coef, scalar_like(1, coef));
  for (Tensor& g : grads) g.mul_(clamped);
  return total;
}

void clip_grad_value_(const std::vector<Tensor>& params, double clip_value, Loc loc) {
  if (!(clip_value >= 0) || std::isinf(clip_value))
    throw Error(fmt::format("clip_grad_value_: clip_value must be finite and >= 0, got {} at {}",
                            clip_value, location_str(loc)));
  NoGradGuard no_grad;
  StepScalars s;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined())
      throw Error(fmt::format("clip_grad_value_: parameter {} is an undefined tensor at {}", i,
                              location_str(loc)));
    Tensor g = params[i].grad();
    if (!g.defined()) continue;
    // Bounds as graph parameters, so a changing clip value never recompiles; NaN stays NaN.
    const Tensor hi = s.get(0, "clip_value", clip_value, g.dtype());
    const Tensor lo = s.get(0, "-clip_value", -clip_value, g.dtype());
    g.copy_(where(gt(g, hi), hi, where(lt(g, lo), lo, g)), loc);
  }
}

}  // namespace lt::optim
