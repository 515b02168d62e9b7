// lt::nn::init: every scheme computes its values eagerly and copies them into the tensor.
#include "lt/nn/init.h"

#include <fmt/format.h>

#include <cmath>

#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt::nn::init {
namespace {

void check_float(const Tensor& t, const char* fn, const Loc& loc) {
  if (!t.defined())
    throw Error(fmt::format("init::{}: undefined tensor at {}", fn, location_str(loc)));
  if (!is_float(t.dtype()))
    throw Error(fmt::format("init::{}: {} is not a floating-point tensor at {}", fn,
                            type_str(t.type()), location_str(loc)));
}

/// Fills t with make(t) (run eagerly) and returns it.
template <class F>
Tensor fill(Tensor t, const char* fn, const Loc& loc, F make) {
  check_float(t, fn, loc);
  NoGradGuard no_grad;
  Tensor value;
  {
    ModeGuard eager(Mode::Eager);
    value = make(t);
  }
  t.copy_(value, loc);
  return t;
}

int64_t fan(const Tensor& t, FanMode mode, const Loc& loc) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t, loc);
  return mode == FanMode::FanIn ? fan_in : fan_out;
}

double inv_sqrt(int64_t n, const char* fn, const Loc& loc) {
  if (n <= 0)
    throw Error(fmt::format("init::{}: a tensor with no elements has no fan at {}", fn,
                            location_str(loc)));
  return 1 / std::sqrt(static_cast<double>(n));
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv2d:
    case Nonlinearity::Sigmoid: return 1;
    case Nonlinearity::Tanh: return 5.0 / 3;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1 + param * param));
    case Nonlinearity::SELU: return 3.0 / 4;
  }
  throw Error("calculate_gain: unknown nonlinearity");
}

std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& t, Loc loc) {
  if (!t.defined() || t.rank() < 2)
    throw Error(fmt::format("init: fan in and fan out need a tensor of rank >= 2, got {} at {}",
                            t.defined() ? type_str(t.type()) : "an undefined tensor",
                            location_str(loc)));
  int64_t receptive = 1;
  for (int64_t i = 2; i < t.rank(); ++i) receptive *= t.shape()[i];
  return {t.shape()[1] * receptive, t.shape()[0] * receptive};
}

Tensor uniform_(Tensor t, double a, double b, Loc loc) {
  return fill(std::move(t), "uniform_", loc,
              [&](const Tensor& x) { return rand(x.shape(), x.dtype(), loc) * (b - a) + a; });
}

Tensor normal_(Tensor t, double mean, double std, Loc loc) {
  return fill(std::move(t), "normal_", loc,
              [&](const Tensor& x) { return randn(x.shape(), x.dtype(), loc) * std + mean; });
}

Tensor constant_(Tensor t, double value, Loc loc) {
  return fill(std::move(t), "constant_", loc, [&](const Tensor& x) {
    return full(x.shape(), value, x.dtype(), loc);
  });
}

Tensor zeros_(Tensor t, Loc loc) { return constant_(std::move(t), 0, loc); }
Tensor ones_(Tensor t, Loc loc) { return constant_(std::move(t), 1, loc); }

Tensor xavier_uniform_(Tensor t, double gain, Loc loc) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t, loc);
  const double bound = gain * std::sqrt(6.0) * inv_sqrt(fan_in + fan_out, "xavier_uniform_", loc);
  return uniform_(std::move(t), -bound, bound, loc);
}

Tensor xavier_normal_(Tensor t, double gain, Loc loc) {
  const auto [fan_in, fan_out] = fan_in_and_fan_out(t, loc);
  return normal_(std::move(t), 0,
                 gain * std::sqrt(2.0) * inv_sqrt(fan_in + fan_out, "xavier_normal_", loc), loc);
}

Tensor kaiming_uniform_(Tensor t, double a, FanMode mode, Nonlinearity nonlinearity, Loc loc) {
  const double std =
      calculate_gain(nonlinearity, a) * inv_sqrt(fan(t, mode, loc), "kaiming_uniform_", loc);
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(t), -bound, bound, loc);
}

Tensor kaiming_normal_(Tensor t, double a, FanMode mode, Nonlinearity nonlinearity, Loc loc) {
  const double std =
      calculate_gain(nonlinearity, a) * inv_sqrt(fan(t, mode, loc), "kaiming_normal_", loc);
  return normal_(std::move(t), 0, std, loc);
}

}  // namespace lt::nn::init
