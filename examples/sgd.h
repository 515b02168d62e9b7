// Hand-written SGD with momentum for the example trainers and step benchmarks.
#pragma once
#include <utility>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {

/// SGD with PyTorch's momentum rule: v = momentum * v + g; p -= lr * v.
class Sgd {
 public:
  Sgd(std::vector<Tensor> params, double lr, double momentum)
      : params_(std::move(params)), velocity_(params_.size()), lr_(lr), momentum_(momentum) {}

  void zero_grad() {
    for (Tensor& p : params_) p.zero_grad();
  }

  void set_lr(double lr) { lr_ = lr; }

  void step() {
    NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor g = params_[i].grad();
      if (!g.defined()) continue;
      if (momentum_ == 0) {
        params_[i].sub_(g * lr_);
        continue;
      }
      if (!velocity_[i].defined()) velocity_[i] = zeros_like(g);
      velocity_[i].mul_(momentum_).add_(g);
      params_[i].sub_(velocity_[i] * lr_);
    }
  }

 private:
  std::vector<Tensor> params_, velocity_;
  double lr_, momentum_;
};

}  // namespace lt::examples
