// The activation layers and Dropout over the functional ops.
#include "lt/nn/activation.h"

#include <cmath>

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

LeakyReLU::LeakyReLU(double negative_slope) : negative_slope(negative_slope) {
  require(std::isfinite(negative_slope), "LeakyReLU", "negative_slope = {} is not finite",
          negative_slope);
}

Tensor LeakyReLU::forward(const Tensor& x, Loc loc) { return leaky_relu(x, negative_slope, loc); }

std::string LeakyReLU::extra_repr() const {
  return fmt::format("negative_slope={}", negative_slope);
}

Tensor SiLU::forward(const Tensor& x, Loc loc) { return silu(x, loc); }
Tensor Sigmoid::forward(const Tensor& x, Loc loc) { return sigmoid(x, loc); }
Tensor Tanh::forward(const Tensor& x, Loc loc) { return tanh(x, loc); }

Tensor Hardswish::forward(const Tensor& x, Loc loc) { return hardswish(x, loc); }
Tensor Hardsigmoid::forward(const Tensor& x, Loc loc) { return hardsigmoid(x, loc); }
Tensor Mish::forward(const Tensor& x, Loc loc) { return mish(x, loc); }

ELU::ELU(double alpha) : alpha(alpha) {
  require(std::isfinite(alpha), "ELU", "alpha = {} is not finite", alpha);
}

Tensor ELU::forward(const Tensor& x, Loc loc) { return elu(x, alpha, loc); }

// Python's repr of a float, as PyTorch prints its default: "alpha=1.0".
std::string ELU::extra_repr() const {
  std::string a = fmt::format("{}", alpha);
  if (a.find_first_of(".e") == std::string::npos) a += ".0";
  return fmt::format("alpha={}", a);
}

Softplus::Softplus(double beta, double threshold) : beta(beta), threshold(threshold) {
  require(std::isfinite(beta) && beta != 0, "Softplus", "beta = {} is not a finite nonzero number",
          beta);
  require(!std::isnan(threshold), "Softplus", "threshold is NaN");
}

Tensor Softplus::forward(const Tensor& x, Loc loc) { return softplus(x, beta, threshold, loc); }

std::string Softplus::extra_repr() const {
  return fmt::format("beta={}, threshold={}", beta, threshold);
}

Dropout::Dropout(double p) : p(p) {
  require(p >= 0 && p <= 1, "Dropout", "p = {} outside [0, 1]", p);
}

Tensor Dropout::forward(const Tensor& x, Loc loc) { return dropout(x, p, is_training(), loc); }

std::string Dropout::extra_repr() const { return fmt::format("p={}", p); }

}  // namespace lt::nn
