// Spatial layers: Conv1d on [N, C, L] sequences; on [N, C, H, W] images Conv2d,
// ConvTranspose2d, the pools and Upsample.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "lt/nn/module.h"
#include "lt/ops.h"

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

/// Average pooling to a fixed output size, PyTorch's windows (lt::adaptive_avg_pool2d): output
/// cell i along a dim averages input [floor(i in / out), ceil((i + 1) in / out)).
class AdaptiveAvgPool2d : public Module {
 public:
  explicit AdaptiveAvgPool2d(Size2d output_size);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Size2d output_size;
};

/// Max pooling to a fixed output size over AdaptiveAvgPool2d's windows. forward gives the values
/// (PyTorch's return_indices=false), forward_with_indices also each maximum's flat position in
/// its input plane.
class AdaptiveMaxPool2d : public Module {
 public:
  explicit AdaptiveMaxPool2d(Size2d output_size);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  ValuesIndices forward_with_indices(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Size2d output_size;
};

struct Conv1dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
  bool bias = true;
};

/// 1-d convolution of [N, C, L] (or [C, L]), weight [out, in / groups, k], initialized as
/// Conv2d (fan_in = in / groups * k).
class Conv1d : public Module {
 public:
  Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
         Conv1dOptions options = {});
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t in_channels, out_channels, kernel_size;
  const Conv1dOptions options;
  Tensor weight, bias;  ///< bias undefined without options.bias
};

struct ConvTranspose2dOptions {
  Size2d stride = 1, padding = 0, output_padding = 0;
  int64_t groups = 1;
  bool bias = true;
  Size2d dilation = 1;
};

/// The transposed 2-d convolution (lt::conv_transpose2d), weight [in, out / groups, kh, kw] as
/// PyTorch's. Initialized as PyTorch's, from the weight's own fan_in, out / groups * kh * kw.
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Size2d kernel_size,
                  ConvTranspose2dOptions options = {});
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  void reset_parameters();
  std::string extra_repr() const override;

  const int64_t in_channels, out_channels;
  const Size2d kernel_size;
  const ConvTranspose2dOptions options;
  Tensor weight, bias;  ///< bias undefined without options.bias
};

/// lt::interpolate as a layer: size or scale_factor (one of them), mode "nearest" or
/// "bilinear", align_corners for bilinear.
class Upsample : public Module {
 public:
  explicit Upsample(InterpolateOptions options);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const InterpolateOptions options;
};

}  // namespace lt::nn
