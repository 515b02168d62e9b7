// PyTorch 1.13's documented optimizer algorithms (torch.optim.SGD, Adam, AdamW, RMSprop,
// Adagrad), element by element in f64: the independent reference of the optimizer tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"

namespace lt::testing {

using Vec = std::vector<double>;

/// torch.optim.SGD: the buffer starts as the first gradient itself (no dampening).
struct RefSGD {
  explicit RefSGD(const optim::SGDOptions& o) : o(o) {}

  optim::SGDOptions o;
  Vec b;
  bool started = false;

  void step(Vec& p, const Vec& grad) {
    Vec g = grad;
    for (size_t k = 0; k < p.size(); ++k) g[k] += o.weight_decay * p[k];
    if (o.momentum != 0) {
      if (!started) {
        b = g;
      } else {
        for (size_t k = 0; k < p.size(); ++k) b[k] = o.momentum * b[k] + (1 - o.dampening) * g[k];
      }
      started = true;
      for (size_t k = 0; k < p.size(); ++k) g[k] = o.nesterov ? g[k] + o.momentum * b[k] : b[k];
    }
    for (size_t k = 0; k < p.size(); ++k) p[k] -= o.lr * g[k];
  }
};

/// torch.optim.Adam (decoupled = false: L2 added to the gradient) and AdamW (decoupled: the
/// parameter decays by lr * weight_decay first). amsgrad takes the maximum of the raw second
/// moments and corrects it, as PyTorch's code does.
struct RefAdam {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, decoupled = false;
  Vec m, v, vmax;
  int t = 0;

  void step(Vec& p, const Vec& grad) {
    if (m.empty()) m = v = vmax = Vec(p.size(), 0.0);
    ++t;
    Vec g = grad;
    for (size_t k = 0; k < p.size(); ++k) {
      if (decoupled) {
        p[k] *= 1 - lr * weight_decay;
      } else {
        g[k] += weight_decay * p[k];
      }
      m[k] = beta1 * m[k] + (1 - beta1) * g[k];
      v[k] = beta2 * v[k] + (1 - beta2) * g[k] * g[k];
      const double m_hat = m[k] / (1 - std::pow(beta1, t));
      vmax[k] = std::max(vmax[k], v[k]);
      const double v_hat = (amsgrad ? vmax[k] : v[k]) / (1 - std::pow(beta2, t));
      p[k] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
};

/// torch.optim.RMSprop: the momentum buffer and averages start as zeros.
struct RefRMSprop {
  explicit RefRMSprop(const optim::RMSpropOptions& o) : o(o) {}

  optim::RMSpropOptions o;
  Vec square_avg, grad_avg, buf;

  void step(Vec& p, const Vec& grad) {
    if (square_avg.empty()) square_avg = grad_avg = buf = Vec(p.size(), 0.0);
    for (size_t k = 0; k < p.size(); ++k) {
      const double g = grad[k] + o.weight_decay * p[k];
      square_avg[k] = o.alpha * square_avg[k] + (1 - o.alpha) * g * g;
      double avg = square_avg[k];
      if (o.centered) {
        grad_avg[k] = o.alpha * grad_avg[k] + (1 - o.alpha) * g;
        avg -= grad_avg[k] * grad_avg[k];
      }
      avg = std::sqrt(avg) + o.eps;
      if (o.momentum != 0) {
        buf[k] = o.momentum * buf[k] + g / avg;
        p[k] -= o.lr * buf[k];
      } else {
        p[k] -= o.lr * g / avg;
      }
    }
  }
};

/// torch.optim.Adagrad: the sum starts at initial_accumulator_value.
struct RefAdagrad {
  explicit RefAdagrad(const optim::AdagradOptions& o) : o(o) {}

  optim::AdagradOptions o;
  Vec sum;
  int t = 0;

  void step(Vec& p, const Vec& grad) {
    if (sum.empty()) sum = Vec(p.size(), o.initial_accumulator_value);
    ++t;
    const double clr = o.lr / (1 + (t - 1) * o.lr_decay);
    for (size_t k = 0; k < p.size(); ++k) {
      const double g = grad[k] + o.weight_decay * p[k];
      sum[k] += g * g;
      p[k] -= clr * g / (std::sqrt(sum[k]) + o.eps);
    }
  }
};

/// A made-up gradient for step t: mixed signs and magnitudes, different in every element.
inline Vec grad_at(int t, size_t n, double scale = 1) {
  Vec g(n);
  for (size_t k = 0; k < n; ++k)
    g[k] = scale * std::sin(1.7 * static_cast<double>(k) + 0.9 * t + 0.3);
  return g;
}

/// |a - b| <= tol * max(1, |b|) elementwise.
inline ::testing::AssertionResult Near(const Vec& a, const Vec& b, double tol) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t k = 0; k < a.size(); ++k)
    if (!(std::abs(a[k] - b[k]) <= tol * std::max(1.0, std::abs(b[k]))))
      return ::testing::AssertionFailure() << "element " << k << ": " << a[k] << " vs " << b[k]
                                           << " (diff " << a[k] - b[k] << ")";
  return ::testing::AssertionSuccess();
}

/// f64 vectors as tensors: a parameter (requires grad) and a gradient.
inline Tensor f64_param(const Vec& v) {
  return from_vector<double>(v, {static_cast<int64_t>(v.size())}).requires_grad_();
}
inline Tensor f64_grad(const Vec& v) {
  return from_vector<double>(v, {static_cast<int64_t>(v.size())});
}

/// Steps optimizer `Opt` and its reference `Ref` (both made from `o`) side by side from `start`
/// on grad_at's gradients, asserting that the parameters agree to 1e-13 after every step.
/// Returns the optimizer's state_dict tensors and the reference, for their state.
template <class Opt, class Ref, class Options>
std::pair<TensorDict, Ref> step_beside_reference(const Options& o, int steps, Vec start) {
  Tensor p = f64_param(start);
  Opt opt({p}, o);
  Ref ref(o);
  for (int t = 0; t < steps; ++t) {
    const Vec g = grad_at(t, start.size());
    p.set_grad(f64_grad(g));
    opt.step();
    ref.step(start, g);
    EXPECT_TRUE(Near(p.to_vector<double>(), start, 1e-13)) << "step " << t;
  }
  return {opt.state_dict().tensors, ref};
}

/// `steps` steps of `Opt` on an f32 parameter follow its f64 reference to `tol`.
template <class Opt, class Ref, class Options>
void expect_f32_follows_reference(const Options& o, int steps = 6, double tol = 2e-6) {
  Vec expect = {0.5, -1.25, 2.0};
  Tensor p = from_vector<float>({0.5f, -1.25f, 2.0f}, {3}).requires_grad_();
  Opt opt({p}, o);
  Ref ref(o);
  for (int t = 0; t < steps; ++t) {
    const Vec g = grad_at(t, 3);
    p.set_grad(cast(f64_grad(g), DType::F32));
    opt.step();
    ref.step(expect, g);
  }
  EXPECT_TRUE(Near(p.to_vector<double>(), expect, tol));
}

/// Lazy steps of `Opt` give eager's parameters (to 1e-15) from one graph: steps 2 to 4 are
/// cache hits, and nothing syncs.
template <class Opt, class Options>
void expect_lazy_steps_match_eager(const Options& o, const Vec& start) {
  Tensor pe = f64_param(start), pl = f64_param(start);
  Opt eager({pe}, o), lazy_opt({pl}, o);
  for (int t = 0; t < 4; ++t) {
    if (t == 1) metrics::reset();
    const Vec g = grad_at(t, start.size());
    pe.set_grad(f64_grad(g));
    eager.step();
    ModeGuard lazy(Mode::Lazy);
    pl.set_grad(f64_grad(g));
    lazy_opt.step();
    mark_step();
  }
  EXPECT_EQ(metrics::counter("cache_miss"), 0);
  EXPECT_EQ(metrics::counter("cache_hit"), 3);
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_TRUE(Near(pl.to_vector<double>(), pe.to_vector<double>(), 1e-15));
}

}  // namespace lt::testing
