// The MLP trainer shared by examples/fmnist_mlp and tests/e2e/mlp_fmnist_test: the model, a
// hand-written SGD with momentum, one training step and test accuracy. The loop is written the
// way a user would write it in eager mode, which lazy mode must later accept unchanged.
#pragma once
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "lt/data.h"
#include "lt/lazy.h"
#include "examples/sgd.h"
#include "lt/lt.h"

namespace lt::examples {

/// Linear layers with ReLU between them; sizes = {in, hidden..., out}.
class Mlp {
 public:
  explicit Mlp(const std::vector<int64_t>& sizes) {
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      const int64_t in = sizes[i], out = sizes[i + 1];
      // Kaiming (He) uniform for ReLU: Var(w) = 2 / fan_in keeps activations O(1) through the
      // stack. Biases take PyTorch's U(+-1/sqrt(fan_in)).
      weights_.push_back(uniform({out, in}, std::sqrt(6.0 / in)).requires_grad_());
      biases_.push_back(uniform({out}, 1.0 / std::sqrt(in)).requires_grad_());
    }
  }

  /// Logits [N, sizes.back()] of inputs [N, sizes.front()].
  Tensor forward(const Tensor& x) const {
    Tensor h = x;
    for (size_t i = 0; i < weights_.size(); ++i) {
      h = linear(h, weights_[i], biases_[i]);
      if (i + 1 < weights_.size()) h = relu(h);
    }
    return h;
  }

  /// Handles to the parameters: updates through them (sub_ rebinds) reach the model.
  std::vector<Tensor> parameters() const {
    std::vector<Tensor> p;
    for (size_t i = 0; i < weights_.size(); ++i) {
      p.push_back(weights_[i]);
      p.push_back(biases_[i]);
    }
    return p;
  }

 private:
  static Tensor uniform(Shape shape, double bound) {
    return (rand(std::move(shape)) * 2.0 - 1.0) * bound;
  }

  std::vector<Tensor> weights_, biases_;
};

/// Cosine decay from `lr` at step 0 to 0 at step `total`: large early steps make fast progress,
/// small late ones settle into a minimum instead of rattling around it.
inline double cosine_lr(double lr, int64_t step, int64_t total) {
  const double pi = 3.14159265358979323846;
  return 0.5 * lr * (1 + std::cos(pi * static_cast<double>(step) / static_cast<double>(total)));
}

/// One optimizer step on a batch; returns the batch's mean loss (no history).
inline Tensor train_step(const Mlp& model, Sgd& opt, const data::Batch& batch) {
  opt.zero_grad();
  Tensor loss = cross_entropy(model.forward(batch.images), batch.labels);
  loss.backward();
  opt.step();
  return loss.detach();
}

/// Fraction of `ds` whose argmax logit is the label, evaluated in chunks to bound memory.
inline double accuracy(const Mlp& model, const data::Dataset& ds, int64_t chunk = 1000) {
  NoGradGuard no_grad;
  const int64_t n = ds.size();
  if (n == 0) return 0;
  int64_t correct = 0;
  for (int64_t start = 0; start < n; start += chunk) {
    // Cut the chunk eagerly: in lazy mode a traced slice would bake `start` into the graph and
    // recompile for every chunk (docs/DEBUGGING.md); an eager slice is just new input data.
    Tensor x, y;
    {
      ModeGuard eager(Mode::Eager);
      x = slice(ds.images, 0, start, start + chunk);
      y = slice(ds.labels, 0, start, start + chunk);
    }
    const Tensor hit = cast(eq(argmax(model.forward(x), 1), y), DType::I64);
    correct += sum(hit).item<int64_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(n);
}

}  // namespace lt::examples
