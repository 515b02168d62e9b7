// The MLP of examples/fmnist_mlp and the tests that train it: Linear layers with ReLU (and
// optional dropout) between them, one optimizer step, and test accuracy.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "lt/data.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/nn.h"
#include "lt/optim.h"

namespace lt::examples {

/// sizes = {in, hidden..., out}. Parameters are named as in a PyTorch nn.Sequential: 0.weight,
/// 0.bias, 2.weight, ... (3.weight with dropout, which takes an index of its own).
class Mlp : public nn::Sequential {
 public:
  explicit Mlp(const std::vector<int64_t>& sizes, double dropout = 0) {
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      auto fc = std::make_shared<nn::Linear>(sizes[i], sizes[i + 1]);
      // Kaiming (He) uniform for ReLU: Var(w) = 2 / fan_in keeps activations O(1) through the
      // stack. Biases keep PyTorch's U(+-1/sqrt(fan_in)).
      nn::init::kaiming_uniform_(fc->weight, 0, nn::init::FanMode::FanIn,
                                 nn::init::Nonlinearity::ReLU);
      push_back(fc);
      if (i + 2 < sizes.size()) {
        push_back(std::make_shared<nn::ReLU>());
        if (dropout > 0) push_back(std::make_shared<nn::Dropout>(dropout));
      }
    }
  }
};

/// One optimizer step on a batch; returns the batch's mean loss (no history).
inline Tensor train_step(Mlp& model, optim::Optimizer& opt, const data::Batch& batch) {
  opt.zero_grad();
  Tensor loss = cross_entropy(model.forward(batch.images), batch.labels);
  loss.backward();
  opt.step();
  return loss.detach();
}

/// Fraction of `ds` whose argmax logit is the label, evaluated in chunks to bound memory.
inline double accuracy(Mlp& model, const data::TensorDataset& ds, int64_t chunk = 1000) {
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
