// A tiny model trained with loss scaling, and steps whose gradients get an inf or a NaN, for the
// GradScaler tests (unit and replicas).
#pragma once
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lt/lt.h"

namespace lt::testing {

/// What one step's gradient of `w` gets added: nothing, or an inf or a NaN in one element.
enum class Grad { Finite, Inf, NaN };

/// tanh(linear(x, w, b)) with a squared error; parameters are f32 device data.
struct TinyModel {
  Tensor w = from_vector<float>({0.5, -0.25, 1, 2, -1, 0.75}, {2, 3}).requires_grad_();
  Tensor b = from_vector<float>({0.1, -0.2}, {2}).requires_grad_();

  std::vector<Tensor> params() const { return {w, b}; }
  Tensor loss(const std::pair<Tensor, Tensor>& batch) const {
    const Tensor d = tanh(linear(batch.first, w, b)) - batch.second;
    return mean(d * d);
  }
};

/// Batch k: eager device data, so every step's graph reads it as a parameter.
inline std::pair<Tensor, Tensor> scaled_batch(int k) {
  ModeGuard eager(Mode::Eager);
  manual_seed(200 + static_cast<uint64_t>(k));
  return {randn({4, 3}), randn({4, 2})};
}

/// Zeros of w's shape, but for element 3 under Inf or NaN: device data like the batches, so a
/// bad step runs the same graph as a good one.
inline Tensor poison(Grad kind) {
  ModeGuard eager(Mode::Eager);
  std::vector<float> v(6, 0.0f);
  if (kind == Grad::Inf) v[3] = std::numeric_limits<float>::infinity();
  if (kind == Grad::NaN) v[3] = std::numeric_limits<float>::quiet_NaN();
  return from_vector(v, {2, 3});
}

/// Adds poison(kind) to w's gradient (it shares the parameter's gradient).
inline void inject(const TinyModel& m, Grad kind) {
  Tensor g = m.w.grad();
  g.add_(poison(kind));
}

/// One step on batch k with loss scaling; `kind` spoils the gradients after backward. In lazy
/// mode the caller marks the step; with update false, the caller also calls scaler.update().
inline void scaled_step(TinyModel& m, optim::Optimizer& opt, amp::GradScaler& scaler, int k,
                        Grad kind, bool update = true) {
  opt.zero_grad();
  scaler.scale(m.loss(scaled_batch(k))).backward();
  inject(m, kind);
  scaler.step(opt);
  if (update) scaler.update();
}

/// Every parameter and optimizer state tensor's values, by name (floats compare bit for bit
/// with ==, NaN aside, which no kept value holds).
inline std::map<std::string, std::vector<float>> values(const TinyModel& m,
                                                        const optim::Optimizer& opt) {
  std::map<std::string, std::vector<float>> out;
  for (const auto& [name, t] : opt.state_dict().tensors) out[name] = t.to_vector<float>();
  out["w"] = m.w.to_vector<float>();
  out["b"] = m.b.to_vector<float>();
  return out;
}

}  // namespace lt::testing
