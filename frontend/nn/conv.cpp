// Conv2d and the pools: constructor checks, then the functional ops.
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

void Conv2d::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::fan_in_and_fan_out(weight).first;
    const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor Conv2d::forward(const Tensor& x, Loc loc) {
  if (x.defined() && (x.rank() != 4 || x.shape()[1] != in_channels))
    throw Error(fmt::format("Conv2d(in_channels={}): input {} is not [N, {}, H, W] at {}",
                            in_channels, type_str(x.type()), in_channels, location_str(loc)));
  return conv2d(x, weight, bias,
                {options.stride.vec(), options.padding.vec(), options.dilation.vec(),
                 options.groups},
                loc);
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
  return max_pool2d(x, {kernel_size.vec(), stride.vec(), padding.vec(), ceil_mode}, loc);
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
  return avg_pool2d(
      x, {kernel_size.vec(), stride.vec(), padding.vec(), ceil_mode, count_include_pad}, loc);
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
  if (!x.defined() || x.rank() != 4)
    throw Error(fmt::format("AdaptiveAvgPool2d: input must be [N, C, H, W], got {} at {}",
                            x.defined() ? type_str(x.type()) : "an undefined tensor",
                            location_str(loc)));
  const int64_t h = x.shape()[2], w = x.shape()[3];
  if (output_size == Size2d(1)) return adaptive_avg_pool2d(x, {1, 1}, loc);
  if (h % output_size.h != 0 || w % output_size.w != 0)
    throw Error(fmt::format("AdaptiveAvgPool2d: output size {} from input {}x{} is not "
                            "implemented (only input sizes that are multiples of it) at {}",
                            pair_str(output_size), h, w, location_str(loc)));
  const Size2d window(h / output_size.h, w / output_size.w);
  return avg_pool2d(x, {window.vec(), window.vec(), {0, 0}}, loc);
}

std::string AdaptiveAvgPool2d::extra_repr() const {
  return fmt::format("output_size={}", pair_str(output_size));
}

}  // namespace lt::nn
