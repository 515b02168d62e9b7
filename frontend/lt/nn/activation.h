// Parameter-free elementwise layers: ReLU, ReLU6, Hardtanh, GELU, LeakyReLU, SiLU, Sigmoid,
// Tanh, Hardswish, Hardsigmoid, ELU, Softplus, Mish and Dropout.
#pragma once
#include <string>

#include "lt/nn/module.h"

namespace lt::nn {

class ReLU : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// x clamped to [0, 6] (lt::relu6).
class ReLU6 : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// x clamped to [min_val, max_val] (lt::hardtanh).
class Hardtanh : public Module {
 public:
  explicit Hardtanh(double min_val = -1.0, double max_val = 1.0);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const double min_val, max_val;
};

/// GELU(x) = x * Phi(x) (lt::gelu). `approximate` is PyTorch's: "none" (exact,
/// x/2 (1 + erf(x/sqrt(2)))) or "tanh" (x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))).
class GELU : public Module {
 public:
  explicit GELU(std::string approximate = "none");
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const std::string approximate;
};

/// x where x > 0, else negative_slope x (lt::leaky_relu).
class LeakyReLU : public Module {
 public:
  explicit LeakyReLU(double negative_slope = 0.01);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const double negative_slope;
};

/// x sigmoid(x) (lt::silu).
class SiLU : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

class Sigmoid : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

class Tanh : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// x relu6(x + 3) / 6 (lt::hardswish).
class Hardswish : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// relu6(x + 3) / 6 (lt::hardsigmoid).
class Hardsigmoid : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// x where x > 0, else alpha (e^x - 1) (lt::elu).
class ELU : public Module {
 public:
  explicit ELU(double alpha = 1.0);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const double alpha;
};

/// log(1 + e^(beta x)) / beta, x where beta x > threshold (lt::softplus).
class Softplus : public Module {
 public:
  explicit Softplus(double beta = 1.0, double threshold = 20.0);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const double beta, threshold;
};

/// x tanh(softplus(x)) (lt::mish).
class Mish : public Module {
 public:
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// In training mode zeroes each element with probability p (a Philox draw from the global
/// generator) and scales the rest by 1 / (1 - p); the identity in eval mode.
class Dropout : public Module {
 public:
  explicit Dropout(double p = 0.5);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const double p;
};

}  // namespace lt::nn
