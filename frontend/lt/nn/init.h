// Initialization schemes (PyTorch's torch.nn.init). Each fills a floating-point tensor in place
// under NoGradGuard and returns it. Random draws come from the global Philox generator
// (lt::manual_seed) and always run eagerly, so one seed gives the same values in eager mode,
// in lazy mode and on every rank, and building a model compiles nothing.
#pragma once
#include <cstdint>
#include <utility>

#include "lt/tensor.h"

namespace lt::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Conv2d, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };

/// The recommended gain of a nonlinearity (PyTorch's calculate_gain): 1 for linear, conv and
/// sigmoid, 5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky relu (`param` is
/// the negative slope), 3/4 for selu.
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
/// {fan_in, fan_out} of a weight of rank >= 2: dims 1 and 0 times the product of the rest (a
/// conv kernel's receptive field).
std::pair<int64_t, int64_t> fan_in_and_fan_out(const Tensor& t, Loc loc = Loc::current());

/// U(a, b).
Tensor uniform_(Tensor t, double a = 0, double b = 1, Loc loc = Loc::current());
/// N(mean, std^2).
Tensor normal_(Tensor t, double mean = 0, double std = 1, Loc loc = Loc::current());
Tensor constant_(Tensor t, double value, Loc loc = Loc::current());
Tensor zeros_(Tensor t, Loc loc = Loc::current());
Tensor ones_(Tensor t, Loc loc = Loc::current());
/// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio).
Tensor xavier_uniform_(Tensor t, double gain = 1, Loc loc = Loc::current());
/// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor t, double gain = 1, Loc loc = Loc::current());
/// U(-b, b) with b = sqrt(3) * gain / sqrt(fan), gain = calculate_gain(nonlinearity, a) (He et
/// al.). Linear and Conv2d use a = sqrt(5), which makes b = 1 / sqrt(fan_in).
Tensor kaiming_uniform_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                        Loc loc = Loc::current());
/// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                       Loc loc = Loc::current());

}  // namespace lt::nn::init
