// The spatial layers: constructor checks, then the functional ops.
#include "lt/nn/conv.h"

#include <cmath>

#include "frontend/nn/layer_args.h"
#include "lt/nn/init.h"
#include "lt/ops.h"

namespace lt::nn {
namespace {

std::string pair_str(const Size2d& s) { return fmt::format("({}, {})", s.h, s.w); }

void check_window(std::string_view layer, const Size2d& kernel, const Size2d& stride,
                  const Size2d& padding) {
  require(kernel.h >= 1 && kernel.w >= 1, layer, "kernel_size {} must be >= 1", pair_str(kernel));
  require(stride.h >= 1 && stride.w >= 1, layer, "stride {} must be >= 1", pair_str(stride));
  require(padding.h >= 0 && padding.w >= 0 && 2 * padding.h <= kernel.h &&
              2 * padding.w <= kernel.w,
          layer, "padding {} must be between 0 and half the kernel_size {}", pair_str(padding),
          pair_str(kernel));
}

std::string window_repr(const Size2d& kernel, const Size2d& stride, const Size2d& padding) {
  return fmt::format("kernel_size={}, stride={}, padding={}", pair_str(kernel), pair_str(stride),
                     pair_str(padding));
}

/// PyTorch's checks of a convolution layer's channels and groups (_ConvNd.__init__).
void check_groups(std::string_view layer, int64_t in, int64_t out, int64_t groups) {
  require(in >= 1 && out >= 1, layer, "channels must be >= 1, got in={}, out={}", in, out);
  require(groups >= 1, layer, "groups must be a positive integer");
  require(in % groups == 0, layer, "in_channels must be divisible by groups");
  require(out % groups == 0, layer, "out_channels must be divisible by groups");
}

/// PyTorch's _ConvNd.reset_parameters: kaiming_uniform_ with a = sqrt(5) on the weight, and
/// the bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the weight's fan_in.
void reset_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::fan_in_and_fan_out(weight).first;
    const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

Conv2d::Conv2d(int64_t in, int64_t out, Size2d kernel, Conv2dOptions o)
    : in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  require(in >= 1 && out >= 1, "Conv2d", "channels must be >= 1, got in={}, out={}", in, out);
  require(o.groups >= 1 && in % o.groups == 0 && out % o.groups == 0, "Conv2d",
          "groups={} must be >= 1 and divide in_channels={} and out_channels={}", o.groups, in,
          out);
  require(kernel.h >= 1 && kernel.w >= 1, "Conv2d", "kernel_size {} must be >= 1",
          pair_str(kernel));
  require(o.stride.h >= 1 && o.stride.w >= 1 && o.dilation.h >= 1 && o.dilation.w >= 1, "Conv2d",
          "stride {} and dilation {} must be >= 1", pair_str(o.stride), pair_str(o.dilation));
  require(o.padding.h >= 0 && o.padding.w >= 0, "Conv2d", "padding {} must be >= 0",
          pair_str(o.padding));
  weight = register_parameter("weight", eager_full({out, in / o.groups, kernel.h, kernel.w}, 0));
  if (o.bias) bias = register_parameter("bias", eager_full({out}, 0));
  reset_parameters();
}

void Conv2d::reset_parameters() { reset_conv(weight, bias); }

Tensor Conv2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (x.defined() && (x.rank() != 4 || x.shape()[1] != in_channels))
      throw Error(fmt::format("Conv2d(in_channels={}): input {} is not [N, {}, H, W] at {}",
                              in_channels, type_str(x.type()), in_channels, location_str(loc)));
    return conv2d(x, weight, bias,
                  {options.stride.vec(), options.padding.vec(), options.dilation.vec(),
                   options.groups},
                  loc);
  });
}

std::string Conv2d::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels,
                              pair_str(kernel_size), pair_str(options.stride));
  if (options.padding != Size2d(0)) s += fmt::format(", padding={}", pair_str(options.padding));
  if (options.dilation != Size2d(1)) s += fmt::format(", dilation={}", pair_str(options.dilation));
  if (options.groups != 1) s += fmt::format(", groups={}", options.groups);
  if (!options.bias) s += ", bias=false";
  return s;
}

MaxPool2d::MaxPool2d(Size2d kernel, std::optional<Size2d> s, Size2d padding, bool ceil_mode)
    : kernel_size(kernel), stride(s.value_or(kernel)), padding(padding), ceil_mode(ceil_mode) {
  check_window("MaxPool2d", kernel_size, stride, padding);
}

Tensor MaxPool2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return max_pool2d(x, {kernel_size.vec(), stride.vec(), padding.vec(), ceil_mode}, loc);
  });
}

std::string MaxPool2d::extra_repr() const {
  return window_repr(kernel_size, stride, padding) + (ceil_mode ? ", ceil_mode=true" : "");
}

AvgPool2d::AvgPool2d(Size2d kernel, std::optional<Size2d> s, Size2d padding, bool ceil_mode,
                     bool count_include_pad)
    : kernel_size(kernel),
      stride(s.value_or(kernel)),
      padding(padding),
      ceil_mode(ceil_mode),
      count_include_pad(count_include_pad) {
  check_window("AvgPool2d", kernel_size, stride, padding);
}

Tensor AvgPool2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return avg_pool2d(
        x, {kernel_size.vec(), stride.vec(), padding.vec(), ceil_mode, count_include_pad}, loc);
  });
}

std::string AvgPool2d::extra_repr() const {
  return window_repr(kernel_size, stride, padding) + (ceil_mode ? ", ceil_mode=true" : "") +
         (count_include_pad ? "" : ", count_include_pad=false");
}

AdaptiveAvgPool2d::AdaptiveAvgPool2d(Size2d size) : output_size(size) {
  require(size.h >= 1 && size.w >= 1, "AdaptiveAvgPool2d", "output_size {} must be >= 1",
          pair_str(size));
}

Tensor AdaptiveAvgPool2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return adaptive_avg_pool2d(x, output_size.vec(), loc);
  });
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return fmt::format("output_size={}", pair_str(output_size));
}

AdaptiveMaxPool2d::AdaptiveMaxPool2d(Size2d size) : output_size(size) {
  require(size.h >= 1 && size.w >= 1, "AdaptiveMaxPool2d", "output_size {} must be >= 1",
          pair_str(size));
}

Tensor AdaptiveMaxPool2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return adaptive_max_pool2d(x, output_size.vec(), loc);
  });
}

ValuesIndices AdaptiveMaxPool2d::forward_with_indices(const Tensor& x, Loc loc) {
  return adaptive_max_pool2d_with_indices(x, output_size.vec(), loc);
}

std::string AdaptiveMaxPool2d::extra_repr() const {
  return fmt::format("output_size={}", pair_str(output_size));
}

Conv1d::Conv1d(int64_t in, int64_t out, int64_t kernel, Conv1dOptions o)
    : in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  check_groups("Conv1d", in, out, o.groups);
  require(kernel >= 1, "Conv1d", "kernel_size {} must be >= 1", kernel);
  require(o.stride >= 1 && o.dilation >= 1, "Conv1d", "stride {} and dilation {} must be >= 1",
          o.stride, o.dilation);
  require(o.padding >= 0, "Conv1d", "padding {} must be >= 0", o.padding);
  weight = register_parameter("weight", eager_full({out, in / o.groups, kernel}, 0));
  if (o.bias) bias = register_parameter("bias", eager_full({out}, 0));
  reset_parameters();
}

void Conv1d::reset_parameters() { reset_conv(weight, bias); }

Tensor Conv1d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return conv1d(
        x, weight, bias,
        lt::Conv1dOptions{options.stride, options.padding, options.dilation, options.groups}, loc);
  });
}

std::string Conv1d::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size=({},), stride=({},)", in_channels, out_channels,
                              kernel_size, options.stride);
  if (options.padding != 0) s += fmt::format(", padding=({},)", options.padding);
  if (options.dilation != 1) s += fmt::format(", dilation=({},)", options.dilation);
  if (options.groups != 1) s += fmt::format(", groups={}", options.groups);
  if (!options.bias) s += ", bias=false";
  return s;
}

ConvTranspose2d::ConvTranspose2d(int64_t in, int64_t out, Size2d kernel, ConvTranspose2dOptions o)
    : in_channels(in), out_channels(out), kernel_size(kernel), options(o) {
  check_groups("ConvTranspose2d", in, out, o.groups);
  require(kernel.h >= 1 && kernel.w >= 1, "ConvTranspose2d", "kernel_size {} must be >= 1",
          pair_str(kernel));
  require(o.stride.h >= 1 && o.stride.w >= 1 && o.dilation.h >= 1 && o.dilation.w >= 1,
          "ConvTranspose2d", "stride {} and dilation {} must be >= 1", pair_str(o.stride),
          pair_str(o.dilation));
  require(
      o.padding.h >= 0 && o.padding.w >= 0 && o.output_padding.h >= 0 && o.output_padding.w >= 0,
      "ConvTranspose2d", "padding {} and output_padding {} must be >= 0", pair_str(o.padding),
      pair_str(o.output_padding));
  weight = register_parameter("weight", eager_full({in, out / o.groups, kernel.h, kernel.w}, 0));
  if (o.bias) bias = register_parameter("bias", eager_full({out}, 0));
  reset_parameters();
}

void ConvTranspose2d::reset_parameters() { reset_conv(weight, bias); }

Tensor ConvTranspose2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    return conv_transpose2d(x, weight, bias,
                            {options.stride.vec(), options.padding.vec(),
                             options.output_padding.vec(), options.groups, options.dilation.vec()},
                            loc);
  });
}

std::string ConvTranspose2d::extra_repr() const {
  std::string s = fmt::format("{}, {}, kernel_size={}, stride={}", in_channels, out_channels,
                              pair_str(kernel_size), pair_str(options.stride));
  if (options.padding != Size2d(0)) s += fmt::format(", padding={}", pair_str(options.padding));
  if (options.dilation != Size2d(1)) s += fmt::format(", dilation={}", pair_str(options.dilation));
  if (options.output_padding != Size2d(0))
    s += fmt::format(", output_padding={}", pair_str(options.output_padding));
  if (options.groups != 1) s += fmt::format(", groups={}", options.groups);
  if (!options.bias) s += ", bias=false";
  return s;
}

Upsample::Upsample(InterpolateOptions o) : options(std::move(o)) {
  // The checks of interpolate's arguments that need no input, at once.
  require(options.size.empty() || options.scale_factor.empty(), "Upsample",
          "only one of size or scale_factor should be defined");
  require(!options.size.empty() || !options.scale_factor.empty(), "Upsample",
          "either size or scale_factor should be defined");
  require(options.mode == "nearest" || options.mode == "bilinear", "Upsample",
          "mode {} is not implemented (nearest and bilinear are)", options.mode);
  require(options.mode != "nearest" || !options.align_corners.has_value(), "Upsample",
          "align_corners option can only be set with the interpolating modes: linear | bilinear "
          "| bicubic | trilinear");
}

Tensor Upsample::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return interpolate(x, options, loc); });
}

std::string Upsample::extra_repr() const {
  // PyTorch's: one number where one was given, a tuple otherwise.
  const auto list = [](const auto& v, auto format) {
    if (v.size() == 1) return format(v[0]);
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + format(v[i]);
    return s + ")";
  };
  std::string s;
  if (!options.scale_factor.empty()) {
    s = "scale_factor=" + list(options.scale_factor, [](double f) {
          std::string t = fmt::format("{}", f);
          return t.find_first_of(".en") == std::string::npos ? t + ".0" : t;
        });
  } else {
    s = "size=" + list(options.size, [](int64_t n) { return std::to_string(n); });
  }
  s += ", mode=" + options.mode;
  if (options.align_corners.has_value())
    s += fmt::format(", align_corners={}", *options.align_corners ? "true" : "false");
  return s;
}

}  // namespace lt::nn
