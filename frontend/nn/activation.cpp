// The activation layers and Dropout over the functional ops.
#include "lt/nn/activation.h"

#include <cmath>

#include "frontend/nn/layer_args.h"
#include "lt/ops.h"

namespace lt::nn {

namespace {

// Python's repr of a float, as PyTorch prints its arguments: "1.0", "0.5", "-1.0".
std::string python_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

// The layers that are their op applied to the input, through the forward hooks.
#define LT_ACTIVATION(Layer, op)                                          \
  Tensor Layer::forward(const Tensor& x, Loc loc) {                       \
    return with_hooks(x, [&](const Tensor& x) { return op(x, loc); });    \
  }

LT_ACTIVATION(ReLU, relu)
LT_ACTIVATION(ReLU6, relu6)

// PyTorch's own check (its message), at construction.
Hardtanh::Hardtanh(double min_val, double max_val) : min_val(min_val), max_val(max_val) {
  require(max_val > min_val, "Hardtanh", "max_val ({}) must be greater than min_val ({})",
          max_val, min_val);
}

Tensor Hardtanh::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return hardtanh(x, min_val, max_val, loc); });
}

std::string Hardtanh::extra_repr() const {
  return fmt::format("min_val={}, max_val={}", python_float(min_val), python_float(max_val));
}

GELU::GELU(std::string approx) : approximate(std::move(approx)) {
  require(approximate == "none" || approximate == "tanh", "GELU",
          "approximate must be \"none\" or \"tanh\", got \"{}\"", approximate);
}

Tensor GELU::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return gelu(x, approximate, loc); });
}

std::string GELU::extra_repr() const { return fmt::format("approximate='{}'", approximate); }

LeakyReLU::LeakyReLU(double negative_slope) : negative_slope(negative_slope) {
  require(std::isfinite(negative_slope), "LeakyReLU", "negative_slope = {} is not finite",
          negative_slope);
}

Tensor LeakyReLU::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return leaky_relu(x, negative_slope, loc); });
}

std::string LeakyReLU::extra_repr() const {
  return fmt::format("negative_slope={}", negative_slope);
}

LT_ACTIVATION(SiLU, silu)
LT_ACTIVATION(Sigmoid, sigmoid)
LT_ACTIVATION(Tanh, tanh)

LT_ACTIVATION(Hardswish, hardswish)
LT_ACTIVATION(Hardsigmoid, hardsigmoid)
LT_ACTIVATION(Mish, mish)

ELU::ELU(double alpha) : alpha(alpha) {
  require(std::isfinite(alpha), "ELU", "alpha = {} is not finite", alpha);
}

Tensor ELU::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return elu(x, alpha, loc); });
}

std::string ELU::extra_repr() const { return fmt::format("alpha={}", python_float(alpha)); }

Softplus::Softplus(double beta, double threshold) : beta(beta), threshold(threshold) {
  require(std::isfinite(beta) && beta != 0, "Softplus", "beta = {} is not a finite nonzero number",
          beta);
  require(!std::isnan(threshold), "Softplus", "threshold is NaN");
}

Tensor Softplus::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return softplus(x, beta, threshold, loc); });
}

std::string Softplus::extra_repr() const {
  return fmt::format("beta={}, threshold={}", beta, threshold);
}

Dropout::Dropout(double p) : p(p) {
  require(p >= 0 && p <= 1, "Dropout", "p = {} outside [0, 1]", p);
}

Tensor Dropout::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return dropout(x, p, is_training(), loc); });
}

std::string Dropout::extra_repr() const { return fmt::format("p={}", p); }

#undef LT_ACTIVATION

}  // namespace lt::nn
