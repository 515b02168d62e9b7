// PyTorch 1.13's documented optimizer algorithms (torch.optim.SGD, Adam, AdamW, RMSprop,
// Adagrad), element by element in f64: the independent reference of the optimizer tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

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

}  // namespace lt::testing
