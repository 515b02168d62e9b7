// Spatial layers on [N, C, H, W] images: Conv2d and the pools.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "lt/nn/module.h"

namespace lt::nn {

/// A (height, width) pair that one number fills both of, as PyTorch's int-or-tuple arguments:
/// `3` is {3, 3}.
struct Size2d {
  Size2d(int64_t both) : h(both), w(both) {}  // NOLINT: implicit on purpose
  Size2d(int64_t h, int64_t w) : h(h), w(w) {}
  std::vector<int64_t> vec() const { return {h, w}; }
  bool operator==(const Size2d&) const = default;
  int64_t h, w;
};

struct Conv2dOptions {
  Size2d stride = 1, padding = 0, dilation = 1;
  int64_t groups = 1;
  bool bias = true;
};

/// 2-d convolution (cross-correlation, zero padding), weight [out, in / groups, kh, kw].
/// Initialized as PyTorch's: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias, with
/// fan_in = in / groups * kh * kw.
class Conv2d : public Module {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Size2d kernel_size, Conv2dOptions options = {});
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t in_channels, out_channels;
  const Size2d kernel_size;
  const Conv2dOptions options;
  Tensor weight, bias;  ///< bias undefined without options.bias
};

/// Max over kernel windows; stride defaults to the kernel, padding counts as -inf; ceil_mode as
/// in lt::Pool2dOptions.
class MaxPool2d : public Module {
 public:
  explicit MaxPool2d(Size2d kernel_size, std::optional<Size2d> stride = std::nullopt,
                     Size2d padding = 0, bool ceil_mode = false);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Size2d kernel_size, stride, padding;
  const bool ceil_mode;
};

/// Mean over kernel windows; stride defaults to the kernel; padded taps count as zeros in the
/// mean (count_include_pad=true, PyTorch's default) or are left out of the divisor (false).
class AvgPool2d : public Module {
 public:
  explicit AvgPool2d(Size2d kernel_size, std::optional<Size2d> stride = std::nullopt,
                     Size2d padding = 0, bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Size2d kernel_size, stride, padding;
  const bool ceil_mode, count_include_pad;
};

/// Average pooling to a fixed output size. Implemented where the input size is a multiple of
/// the output size (windows of input / output, which is PyTorch's result there, and 1x1 global
/// pooling); other sizes throw.
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2d output_size);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Size2d output_size;
};

}  // namespace lt::nn
