// The MLP trainer shared by examples/fmnist_mlp and tests/e2e/mlp_fmnist_test: the model, a
// hand-written SGD with momentum, one training step and test accuracy. The loop is written the
// way a user would write it in eager mode, which lazy mode must later accept unchanged.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "examples/sgd.h"
#include "lt/data.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/nn.h"

namespace lt::examples {

/// Linear layers with ReLU between them; sizes = {in, hidden..., out}. Parameters are named
/// as in a PyTorch nn.Sequential: 0.weight, 0.bias, 2.weight, ...
class Mlp : public nn::Sequential {
 public:
  explicit Mlp(const std::vector<int64_t>& sizes) {
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      auto fc = std::make_shared<nn::Linear>(sizes[i], sizes[i + 1]);
      // Kaiming (He) uniform for ReLU: Var(w) = 2 / fan_in keeps activations O(1) through the
      // stack. Biases keep PyTorch's U(+-1/sqrt(fan_in)).
      nn::init::kaiming_uniform_(fc->weight, 0, nn::init::FanMode::FanIn,
                                 nn::init::Nonlinearity::ReLU);
      push_back(fc);
      if (i + 2 < sizes.size()) push_back(std::make_shared<nn::ReLU>());
    }
  }
};

/// Cosine decay from `lr` at step 0 to 0 at step `total`: large early steps make fast progress,
/// small late ones settle into a minimum instead of rattling around it.
inline double cosine_lr(double lr, int64_t step, int64_t total) {
  const double pi = 3.14159265358979323846;
  return 0.5 * lr * (1 + std::cos(pi * static_cast<double>(step) / static_cast<double>(total)));
}

/// One optimizer step on a batch; returns the batch's mean loss (no history).
inline Tensor train_step(Mlp& model, Sgd& opt, const data::Batch& batch) {
  opt.zero_grad();
  Tensor loss = cross_entropy(model.forward(batch.images), batch.labels);
  loss.backward();
  opt.step();
  return loss.detach();
}

/// Fraction of `ds` whose argmax logit is the label, evaluated in chunks to bound memory.
inline double accuracy(Mlp& model, const data::Dataset& ds, int64_t chunk = 1000) {
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
