// ReLU, GELU and Dropout over the functional ops.
#include "lt/nn/activation.h"

#include "frontend/nn/layer_args.h"
#include "lt/ops.h"

namespace lt::nn {

Tensor ReLU::forward(const Tensor& x, Loc loc) { return relu(x, loc); }

GELU::GELU(std::string approx) : approximate(std::move(approx)) {
  require(approximate == "none" || approximate == "tanh", "GELU",
          "approximate must be \"none\" or \"tanh\", got \"{}\"", approximate);
}

Tensor GELU::forward(const Tensor& x, Loc loc) { return gelu(x, approximate, loc); }

std::string GELU::extra_repr() const { return fmt::format("approximate='{}'", approximate); }

Dropout::Dropout(double p) : p(p) {
  require(p >= 0 && p <= 1, "Dropout", "p = {} outside [0, 1]", p);
}

Tensor Dropout::forward(const Tensor& x, Loc loc) { return dropout(x, p, is_training(), loc); }

std::string Dropout::extra_repr() const { return fmt::format("p={}", p); }

}  // namespace lt::nn
