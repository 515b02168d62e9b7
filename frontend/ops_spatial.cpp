// The spatial ops composed of rows, with PyTorch 1.13's arguments, results and errors: conv1d
// (conv2d over a height of 1), conv_transpose2d (the conv2d_input_grad row), interpolate
// (index_select and weighted sums) and the adaptive pools (windows gathered by index_select).
// Their gradients are those of the rows they are made of.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "frontend/dispatch.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

std::string sizes_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

/// A double as Python prints it (2.0, not 2), for PyTorch's messages.
std::string py_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

/// The operands a failing op names: x and w, and the bias where there is one.
std::vector<Tensor> conv_operands(const Tensor& x, const Tensor& w, const Tensor& b) {
  return b.defined() ? std::vector{x, w, b} : std::vector{x, w};
}

/// PyTorch's checks of a convolution's arguments (check_shape_forward), in its order and words.
/// x and w have the same rank; `spatial` is the number of spatial dims.
struct ConvCheck {
  std::string_view op;
  std::span<const Tensor> operands;
  const Loc& loc;

  void fail(const std::string& reason) const { fail_op(op, reason, operands, loc); }

  void operator()(const Tensor& x, const Tensor& w, const Tensor& b, const Dims& padding,
                  const Dims& stride, int64_t groups, bool transposed) const {
    const Shape& ws = w.shape();
    if (std::any_of(padding.begin(), padding.end(), [](int64_t p) { return p < 0; }))
      fail("negative padding is not supported");
    if (std::any_of(stride.begin(), stride.end(), [](int64_t s) { return s < 1; }))
      fail("non-positive stride is not supported");
    if (groups < 1) fail("non-positive groups is not supported");
    if (w.rank() != x.rank())
      fail(
          fmt::format("Expected {}-dimensional input for {}-dimensional weight {}, but got "
                      "{}-dimensional input of size {} instead",
                      w.rank(), w.rank(), sizes_str(ws), x.rank(), sizes_str(x.shape())));
    if (ws[0] < groups)
      fail(
          fmt::format("Given groups={}, expected weight to be at least {} at dimension 0, but "
                      "got weight of size {} instead",
                      groups, groups, sizes_str(ws)));
    if (ws[0] % groups != 0)
      fail(
          fmt::format("Given groups={}, expected weight to be divisible by {} at dimension 0, "
                      "but got weight of size [{}] instead",
                      groups, groups, sizes_str(ws)));
    const int64_t channels = transposed ? ws[0] : ws[1] * groups;
    if (x.shape()[1] != channels)
      fail(
          fmt::format("Given {}, weight of size {}, expected input{} to have {} channels, but "
                      "got {} channels instead",
                      transposed ? "transposed=1" : fmt::format("groups={}", groups), sizes_str(ws),
                      sizes_str(x.shape()), channels, x.shape()[1]));
    const int64_t outs = transposed ? ws[1] * groups : ws[0];
    if (b.defined() && (b.rank() != 1 || b.shape()[0] != outs))
      fail(fmt::format(
          "Given {}weight of size {}, expected bias to be 1-dimensional with {} "
          "elements, but got bias of size {} instead",
          transposed ? "transposed=1, " : "", sizes_str(ws), outs, sizes_str(b.shape())));
  }
};

/// A conv2d option of one or two entries as two, or PyTorch's error naming it.
Dims pair_of(const Dims& v, const char* name, const ConvCheck& check) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2)
    check.fail(
        fmt::format("expected {} to be a single integer value or a list of 2 values to "
                    "match the convolution dimensions, but got {}={}",
                    name, name, sizes_str(v)));
  return v;
}

Tensor i64_vector(const std::vector<int64_t>& v, const Loc& loc) {
  return from_vector<int64_t>(v, {static_cast<int64_t>(v.size())}, loc);
}

/// Host values as a tensor of x's float dtype, shaped to broadcast along `axis` of an NCHW x.
Tensor along_axis(const std::vector<double>& v, int64_t axis, DType dtype, const Loc& loc) {
  const int64_t n = static_cast<int64_t>(v.size());
  const Tensor t = from_vector<double>(v, axis == 2 ? Shape{n, 1} : Shape{n}, loc);
  return dtype == DType::F64 ? t : cast(t, dtype, loc);
}

}  // namespace

// --- convolutions ------------------------------------------------------------------------------

Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias, Conv1dOptions o, Loc loc) {
  const std::vector<Tensor> operands = conv_operands(x, w, bias);
  need_defined({operands.data(), 2}, "conv1d", loc);
  const ConvCheck check{"conv1d", operands, loc};
  if (x.rank() != 2 && x.rank() != 3)
    check.fail(
        fmt::format("Expected 2D (unbatched) or 3D (batched) input to conv1d, but got "
                    "input of size: {}",
                    sizes_str(x.shape())));
  if (x.rank() == 2) return squeeze(conv1d(unsqueeze(x, 0, loc), w, bias, o, loc), 0, loc);
  check(x, w, bias, {o.padding}, {o.stride}, o.groups, false);
  if (o.dilation < 1)
    check.fail(fmt::format("dilation should be greater than zero, but got {}", o.dilation));
  const int64_t padded = x.shape()[2] + 2 * o.padding, kernel = o.dilation * (w.shape()[2] - 1) + 1;
  if (padded < kernel)
    check.fail(
        fmt::format("Calculated padded input size per channel: ({}). Kernel size: ({}). "
                    "Kernel size can't be greater than actual input size",
                    padded, kernel));
  // A length is a width under a height of 1, which the kernel covers at stride 1.
  const Tensor y = conv2d(unsqueeze(x, 2, loc), unsqueeze(w, 2, loc), bias,
                          {{1, o.stride}, {0, o.padding}, {1, o.dilation}, o.groups}, loc);
  return squeeze(y, 2, loc);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                        ConvTranspose2dOptions o, Loc loc) {
  const std::vector<Tensor> operands = conv_operands(x, w, bias);
  need_defined({operands.data(), 2}, "conv_transpose2d", loc);
  const ConvCheck check{"conv_transpose2d", operands, loc};
  if (x.rank() != 3 && x.rank() != 4)
    check.fail(
        fmt::format("Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, "
                    "but got input of size: {}",
                    sizes_str(x.shape())));
  if (x.rank() == 3)
    return squeeze(conv_transpose2d(unsqueeze(x, 0, loc), w, bias, std::move(o), loc), 0, loc);
  const Dims stride = pair_of(o.stride, "stride", check);
  const Dims padding = pair_of(o.padding, "padding", check);
  const Dims out_pad = pair_of(o.output_padding, "output_padding", check);
  const Dims dilation = pair_of(o.dilation, "dilation", check);
  if (out_pad[0] < 0 || out_pad[1] < 0) check.fail("negative output_padding is not supported");
  check(x, w, bias, padding, stride, o.groups, true);
  if (dilation[0] < 1 || dilation[1] < 1)
    check.fail(
        fmt::format("dilation should be greater than zero, but got dilation_height: {}, "
                    "dilation_width: {}",
                    dilation[0], dilation[1]));
  if (!((out_pad[1] < stride[1] || out_pad[1] < dilation[1]) &&
        (out_pad[0] < stride[0] || out_pad[0] < dilation[0])))
    check.fail(
        fmt::format("output padding must be smaller than either stride or dilation, but "
                    "got output_padding_height: {} output_padding_width: {} "
                    "stride_height: {} stride_width: {} dilation_height: {} "
                    "dilation_width: {}",
                    out_pad[0], out_pad[1], stride[0], stride[1], dilation[0], dilation[1]));
  const Shape& xs = x.shape();
  // The output before cropping the padding: every tap of every input pixel.
  int64_t full[2], out[2];
  for (int i = 0; i < 2; ++i) {
    full[i] = (xs[2 + i] - 1) * stride[i] + dilation[i] * (w.shape()[2 + i] - 1) + 1;
    out[i] = full[i] - 2 * padding[i] + out_pad[i];
  }
  if (out[0] < 1 || out[1] < 1)
    check.fail(
        fmt::format("Given input size per channel: ({} x {}). Calculated output size per "
                    "channel: ({} x {}). Output size is too small",
                    xs[2], xs[3], out[0], out[1]));
  const int64_t channels = w.shape()[1] * o.groups;
  const Tensor in[] = {x, w};
  Tensor y;
  if (out_pad[0] < stride[0] && out_pad[1] < stride[1]) {
    // This op is conv2d's input gradient with x as the output gradient, and conv2d's shape rule
    // maps the padded output back onto x's size: the output_padding rows and columns are those
    // a stride skips at the end.
    y = apply1(
        Op::Conv2dInputGrad, in,
        ir::ConvAttrs{stride, padding, dilation, o.groups, {xs[0], channels, out[0], out[1]}}, loc);
  } else {
    // An output_padding of at least the stride (allowed below the dilation) has no conv2d
    // output of x's size, so the row gives the uncropped output, which is cropped by the
    // padding and extended by zeros where the output_padding reaches past it.
    y = apply1(
        Op::Conv2dInputGrad, in,
        ir::ConvAttrs{stride, {0, 0}, dilation, o.groups, {xs[0], channels, full[0], full[1]}},
        loc);
    for (int i = 0; i < 2; ++i) {
      y = slice(y, 2 + i, padding[i], padding[i] + out[i], 1, loc);
      const int64_t past = padding[i] + out[i] - full[i];
      if (past <= 0) continue;
      std::vector<std::pair<int64_t, int64_t>> pads(3 + i, {0, 0});
      pads.back() = {0, past};
      y = pad(y, std::move(pads), 0, loc);
    }
  }
  if (!bias.defined()) return y;
  return add(y, reshape(bias, {1, channels, 1, 1}, loc), loc);
}

// --- interpolate -------------------------------------------------------------------------------

namespace {

/// The nearest source index of each output position along a dim, min(floor(dst * scale),
/// in - 1) in T, as PyTorch's kernel for contiguous NCHW input: the scale is 1 / scale_factor
/// when one is given, else in / out. (PyTorch's backward, and its forward on one-channel
/// inputs, map a dim whose output size is the input's, or twice it, by that ratio instead,
/// whatever the factor; the gradient here is always this forward's.)
template <class T>
std::vector<int64_t> nearest_sources(int64_t in, int64_t out, double factor) {
  std::vector<int64_t> src(out);
  const T scale =
      factor > 0 ? static_cast<T>(1.0 / factor) : static_cast<T>(in) / static_cast<T>(out);
  for (int64_t i = 0; i < out; ++i)
    src[i] = std::min(static_cast<int64_t>(std::floor(scale * static_cast<T>(i))), in - 1);
  return src;
}

/// Bilinear taps along a dim: sources i0 and i1 with weights l0 and l1, PyTorch's
/// compute_source_index_and_lambda in T (the kernel's arithmetic: double for f64, else float).
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<double> l0, l1;
};
template <class T>
Taps linear_taps(int64_t in, int64_t out, double factor, bool align_corners) {
  T scale;
  if (align_corners) scale = out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  else scale = factor > 0 ? static_cast<T>(1.0 / factor) : static_cast<T>(in) / static_cast<T>(out);
  Taps t;
  for (int64_t i = 0; i < out; ++i) {
    T src =
        align_corners ? scale * static_cast<T>(i) : scale * (static_cast<T>(i) + T(0.5)) - T(0.5);
    src = std::max(src, T(0));  // PyTorch clamps negative source positions to the first pixel
    const auto i0 = static_cast<int64_t>(src);
    const T l1 = std::min(std::max(src - static_cast<T>(i0), T(0)), T(1));
    t.i0.push_back(i0);
    t.i1.push_back(i0 + (i0 < in - 1 ? 1 : 0));
    t.l1.push_back(l1);
    t.l0.push_back(static_cast<double>(T(1) - l1));
  }
  return t;
}

/// The weighted sum l0 x[i0] + l1 x[i1] along axis.
Tensor lerp_along(const Tensor& x, int64_t axis, const Taps& t, const Loc& loc) {
  const Tensor a = index_select(x, axis, i64_vector(t.i0, loc), loc);
  const Tensor b = index_select(x, axis, i64_vector(t.i1, loc), loc);
  return add(mul(a, along_axis(t.l0, axis, x.dtype(), loc), loc),
             mul(b, along_axis(t.l1, axis, x.dtype(), loc), loc), loc);
}

}  // namespace

Tensor interpolate(const Tensor& x, const InterpolateOptions& o, Loc loc) {
  constexpr std::string_view op = "interpolate";
  need_defined({&x, 1}, op, loc);
  const auto fail = [&](const std::string& reason) { fail_op(op, reason, {&x, 1}, loc); };
  const bool nearest = o.mode == "nearest", bilinear = o.mode == "bilinear";
  if ((nearest || o.mode == "area" || o.mode == "nearest-exact") && o.align_corners.has_value())
    fail(
        "align_corners option can only be set with the interpolating modes: linear | bilinear | "
        "bicubic | trilinear");
  const int64_t dims = x.rank() - 2;
  const std::vector<int64_t> spatial(x.shape().begin() + std::min<int64_t>(2, x.rank()),
                                     x.shape().end());
  if (!o.size.empty() && !o.scale_factor.empty())
    fail("only one of size or scale_factor should be defined");
  if (o.size.empty() && o.scale_factor.empty())
    fail("either size or scale_factor should be defined");
  // One number stands for every spatial dim, as PyTorch's int arguments.
  std::vector<int64_t> size = o.size;
  std::vector<double> factor = o.scale_factor;
  if (size.size() == 1) size.assign(std::max<int64_t>(dims, 1), size[0]);
  if (factor.size() == 1) factor.assign(std::max<int64_t>(dims, 1), factor[0]);
  if (!size.empty() && static_cast<int64_t>(size.size()) != dims)
    fail(
        fmt::format("Input and output must have the same number of spatial dimensions, but got "
                    "input with spatial dimensions of {} and output size of {}. Please provide "
                    "input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
                    "...,oK) format.",
                    sizes_str(spatial), sizes_str(size)));
  if (!factor.empty() && static_cast<int64_t>(factor.size()) != dims) {
    std::vector<std::string> f;
    for (double v : factor) f.push_back(py_float(v));
    fail(
        fmt::format("Input and scale_factor must have the same number of spatial dimensions, "
                    "but got input with spatial dimensions of {} and scale_factor of shape [{}]. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format.",
                    sizes_str(spatial), fmt::join(f, ", ")));
  }
  if (bilinear && x.rank() != 4)
    fail(fmt::format("Got {}D input, but bilinear mode needs 4D input", x.rank()));
  if (!nearest && !bilinear) {
    const bool known = o.mode == "linear" || o.mode == "bicubic" || o.mode == "trilinear" ||
                       o.mode == "area" || o.mode == "nearest-exact";
    if (!known)
      fail(
          fmt::format("Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the "
                      "modes: nearest | linear | bilinear | bicubic | trilinear | area | "
                      "nearest-exact (got {})",
                      x.rank(), o.mode));
    fail(fmt::format("mode {} is not implemented (nearest and bilinear are)", o.mode));
  }
  if (x.rank() != 4)
    fail(fmt::format("only 4D input (N, C, H, W) is implemented, got {}D", x.rank()));
  if (!is_float(x.dtype()))
    fail(fmt::format("\"compute_indices_weights_{}\" not implemented for '{}'",
                     nearest ? "nearest" : "linear", torch_name(x.dtype())));
  const int64_t in[2] = {x.shape()[2], x.shape()[3]};
  int64_t out[2];
  for (int i = 0; i < 2; ++i)
    out[i] = size.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * factor[i]))
                          : size[i];
  if (in[0] < 1 || in[1] < 1 || out[0] < 1 || out[1] < 1)
    fail(
        fmt::format("Input and output sizes should be greater than 0, but got input (H: {}, W: "
                    "{}) output (H: {}, W: {})",
                    in[0], in[1], out[0], out[1]));
  Tensor y = x;
  // Width first, then height: PyTorch's order of the weighted sums,
  // h0 (w0 x00 + w1 x01) + h1 (w0 x10 + w1 x11).
  for (int i = 1; i >= 0; --i) {
    const int64_t axis = 2 + i;
    const double f = factor.empty() ? 0 : factor[i];
    if (nearest) {
      const std::vector<int64_t> src = x.dtype() == DType::F64
                                           ? nearest_sources<double>(in[i], out[i], f)
                                           : nearest_sources<float>(in[i], out[i], f);
      bool identity = out[i] == in[i];
      for (int64_t j = 0; identity && j < out[i]; ++j) identity = src[j] == j;
      if (!identity) y = index_select(y, axis, i64_vector(src, loc), loc);
    } else if (out[i] != in[i]) {  // PyTorch copies a dim of the same size
      const bool ac = o.align_corners.value_or(false);
      y = lerp_along(y, axis,
                     x.dtype() == DType::F64 ? linear_taps<double>(in[i], out[i], f, ac)
                                             : linear_taps<float>(in[i], out[i], f, ac),
                     loc);
    }
  }
  return y;
}

// --- adaptive pools ----------------------------------------------------------------------------

namespace {

/// The windows of an adaptive pool along a dim: output i pools [floor(i in / out),
/// ceil((i + 1) in / out)). Each window is listed with `width` entries (the widest's), the
/// shorter ones padded with their first position, so that a pad repeats a value of its window
/// and comes after it.
struct Windows {
  int64_t width = 0;
  std::vector<int64_t> index;  // out * width positions
  std::vector<bool> real;      // false where index pads a window
  std::vector<double> length;  // per output
};

Windows windows(int64_t in, int64_t out) {
  Windows w;
  for (int64_t i = 0; i < out; ++i)
    w.width = std::max(w.width, ((i + 1) * in + out - 1) / out - i * in / out);
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t k = 0; k < w.width; ++k) {
      w.real.push_back(start + k < end);
      w.index.push_back(start + k < end ? start + k : start);
    }
    w.length.push_back(static_cast<double>(end - start));
  }
  return w;
}

/// x [N, C, H, W] with each output's window along axis gathered into a new dim after it.
Tensor gather_windows(const Tensor& x, int64_t axis, const Windows& w, int64_t out,
                      const Loc& loc) {
  Shape s = x.shape();
  s[axis] = out;
  s.insert(s.begin() + axis + 1, w.width);
  return reshape(index_select(x, axis, i64_vector(w.index, loc), loc), s, loc);
}

/// The mean over each window along axis: the sum of its real entries over their number.
Tensor average_along(const Tensor& x, int64_t axis, int64_t out, const Loc& loc) {
  const int64_t in = x.shape()[axis];
  if (in == out) return x;
  const Windows w = windows(in, out);
  Tensor g = gather_windows(x, axis, w, out, loc);
  if (std::find(w.real.begin(), w.real.end(), false) != w.real.end()) {
    Shape ms{out, w.width};
    if (axis == 2) ms.push_back(1);
    g = where(from_vector<bool>(w.real, ms, loc), g, 0.0, loc);
  }
  return div(sum(g, {axis + 1}, false, loc), along_axis(w.length, axis, x.dtype(), loc), loc);
}

struct AdaptiveArgs {
  Tensor x;  // [N, C, H, W]
  int64_t out[2];
  bool batched;
};

/// PyTorch's checks of an adaptive pool's input and output size, which may be one number.
AdaptiveArgs adaptive_args(std::string_view op, const Tensor& x, std::vector<int64_t> size,
                           const Loc& loc) {
  need_defined({&x, 1}, op, loc);
  const auto fail = [&](const std::string& reason) { fail_op(op, reason, {&x, 1}, loc); };
  if (size.size() == 1) size.push_back(size[0]);
  if (size.size() != 2) fail("output_size must be 2");
  if (x.rank() != 3 && x.rank() != 4)
    fail(fmt::format("Expected 3D or 4D tensor, but got{} {}",
                     op == "adaptive_max_pool2d" ? ":" : "", sizes_str(x.shape())));
  for (int64_t d = x.rank() - 2; d < x.rank(); ++d)
    if (x.shape()[d] == 0)
      fail(
          fmt::format("Expected input to have non-zero size for non-batch dimensions, but "
                      "input has sizes {} with dimension {} being empty",
                      sizes_str(x.shape()), d));
  if (size[0] < 0 || size[1] < 0) {
    Shape s = x.shape();
    s.resize(s.size() - 2);
    s.insert(s.end(), size.begin(), size.end());
    fail(fmt::format("Trying to create tensor with negative dimension {}: {}",
                     std::min(size[0], size[1]), sizes_str(s)));
  }
  if (!is_float(x.dtype()))
    fail(fmt::format("\"{}\" not implemented for '{}'", op, torch_name(x.dtype())));
  return {x.rank() == 4 ? x : unsqueeze(x, 0, loc), {size[0], size[1]}, x.rank() == 4};
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size, Loc loc) {
  AdaptiveArgs a = adaptive_args("adaptive_avg_pool2d", x, std::move(output_size), loc);
  const int64_t h = a.x.shape()[2], w = a.x.shape()[3], oh = a.out[0], ow = a.out[1];
  Tensor y;
  if (oh == 1 && ow == 1) {
    y = mean(a.x, {2, 3}, true, loc);
  } else if (oh == 0 || ow == 0) {
    y = zeros({a.x.shape()[0], a.x.shape()[1], oh, ow}, x.dtype(), loc);
  } else if (h % oh == 0 && w % ow == 0) {
    // Windows of in / out at that stride are PyTorch's there: one pooling row.
    const std::vector<int64_t> window{h / oh, w / ow};
    y = avg_pool2d(a.x, {window, window, {0, 0}}, loc);
  } else {
    y = average_along(average_along(a.x, 2, oh, loc), 3, ow, loc);
  }
  return a.batched ? y : squeeze(y, 0, loc);
}

namespace {

ValuesIndices adaptive_max(const Tensor& x, std::vector<int64_t> output_size, bool indices,
                           const Loc& loc) {
  AdaptiveArgs a = adaptive_args("adaptive_max_pool2d", x, std::move(output_size), loc);
  const int64_t n = a.x.shape()[0], c = a.x.shape()[1], h = a.x.shape()[2], w = a.x.shape()[3];
  const int64_t oh = a.out[0], ow = a.out[1];
  ValuesIndices r;
  if (oh == 0 || ow == 0) {
    r = {zeros({n, c, oh, ow}, x.dtype(), loc), zeros({n, c, oh, ow}, DType::I64, loc)};
  } else if (!indices && h % oh == 0 && w % ow == 0) {
    // The pooling row's windows are these, and its first maximum PyTorch's.
    const std::vector<int64_t> window{h / oh, w / ow};
    r.values = max_pool2d(a.x, {window, window, {0, 0}}, loc);
  } else {
    // Each output's whole window in one trailing dim, in row-major order; pads repeat an
    // earlier entry of their window, so the first maximum (max along a dim) is a real one.
    const Windows wh = windows(h, oh), ww = windows(w, ow);
    Tensor g = gather_windows(gather_windows(a.x, 2, wh, oh, loc), 4, ww, ow, loc);
    g = reshape(permute(g, {0, 1, 2, 4, 3, 5}, loc), {n, c, oh, ow, wh.width * ww.width}, loc);
    ValuesIndices m = max(g, 4, false, loc);
    r.values = m.values;
    if (indices) {
      std::vector<int64_t> flat;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t p = 0; p < wh.width; ++p)
            for (int64_t q = 0; q < ww.width; ++q)
              flat.push_back(wh.index[i * wh.width + p] * w + ww.index[j * ww.width + q]);
      const Shape s{n, c, oh, ow, wh.width * ww.width};
      const Tensor table = expand(from_vector<int64_t>(flat, {oh, ow, s[4]}, loc), s, loc);
      r.indices = squeeze(gather(table, 4, unsqueeze(m.indices, 4, loc), loc), 4, loc);
    }
  }
  if (!a.batched) {
    r.values = squeeze(r.values, 0, loc);
    if (r.indices.defined()) r.indices = squeeze(r.indices, 0, loc);
  }
  return r;
}

}  // namespace

Tensor adaptive_max_pool2d(const Tensor& x, std::vector<int64_t> output_size, Loc loc) {
  return adaptive_max(x, std::move(output_size), false, loc).values;
}

ValuesIndices adaptive_max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> output_size,
                                               Loc loc) {
  return adaptive_max(x, std::move(output_size), true, loc);
}

// --- max pooling with indices and dilation -------------------------------------------------

namespace {

/// The taps of a max pool's windows along a dim: output i reads i stride + p dilation - padding
/// for p < kernel. A tap in the padding repeats the window's first real one, which keeps the
/// first maximum in row-major order a real one at the same position; nullopt where a window
/// holds no real tap.
std::optional<Windows> pool_taps(int64_t in, int64_t out, int64_t kernel, int64_t stride,
                                 int64_t padding, int64_t dilation) {
  Windows w;
  w.width = kernel;
  for (int64_t i = 0; i < out; ++i) {
    int64_t first = -1;
    for (int64_t p = 0; p < kernel && first < 0; ++p) {
      const int64_t pos = i * stride + p * dilation - padding;
      if (pos >= 0 && pos < in) first = pos;
    }
    if (first < 0) return std::nullopt;
    for (int64_t p = 0; p < kernel; ++p) {
      const int64_t pos = i * stride + p * dilation - padding;
      w.index.push_back(pos >= 0 && pos < in ? pos : first);
    }
  }
  return w;
}

}  // namespace

ValuesIndices max_pool2d_with_indices(const Tensor& x, Pool2dOptions o, Loc loc) {
  constexpr std::string_view op = "max_pool2d_with_indices";
  need_defined({&x, 1}, op, loc);
  const auto fail = [&](const std::string& reason) { fail_op(op, reason, {&x, 1}, loc); };
  if (o.stride.empty()) o.stride = o.kernel;
  for (std::vector<int64_t>* v : {&o.kernel, &o.stride, &o.padding, &o.dilation}) {
    if (v->size() == 1) v->push_back(v->front());
    if (v->size() != 2) fail("kernel, stride, padding and dilation must be one or two numbers");
  }
  if (x.rank() != 3 && x.rank() != 4)
    fail(fmt::format("non-empty 3D or 4D (batch mode) tensor expected for input, got {}",
                     sizes_str(x.shape())));
  if (!is_float(x.dtype()))
    fail(fmt::format("\"max_pool2d\" not implemented for '{}'", torch_name(x.dtype())));
  const Tensor x4 = x.rank() == 4 ? x : unsqueeze(x, 0, loc);
  const Shape& s = x4.shape();
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t k = o.kernel[i], st = o.stride[i], p = o.padding[i], d = o.dilation[i];
    if (k < 1 || st < 1 || d < 1 || p < 0 || p > k / 2)
      fail(fmt::format("bad kernel/stride/padding/dilation [{}]/[{}]/[{}]/[{}] (the padding at "
                       "most half the kernel)",
                       fmt::join(o.kernel, ","), fmt::join(o.stride, ","),
                       fmt::join(o.padding, ","), fmt::join(o.dilation, ",")));
    // PyTorch's output size, of the dilated window's extent; with ceil_mode the last window
    // starts inside the input or its left padding.
    const int64_t n = s[2 + i] + 2 * p - d * (k - 1) - 1;
    out[i] = n < 0 ? 0 : (n + (o.ceil_mode ? st - 1 : 0)) / st + 1;
    if (o.ceil_mode && out[i] > 0 && (out[i] - 1) * st >= s[2 + i] + p) --out[i];
  }
  if (out[0] < 1 || out[1] < 1 || s[2] == 0 || s[3] == 0)
    fail(fmt::format("window does not fit input {}", sizes_str(x.shape())));
  const auto wh = pool_taps(s[2], out[0], o.kernel[0], o.stride[0], o.padding[0], o.dilation[0]);
  const auto ww = pool_taps(s[3], out[1], o.kernel[1], o.stride[1], o.padding[1], o.dilation[1]);
  if (!wh || !ww) fail("a window holds no element of the input (only padding)");
  const int64_t n = s[0], c = s[1], oh = out[0], ow = out[1], taps = wh->width * ww->width;
  Tensor g = gather_windows(gather_windows(x4, 2, *wh, oh, loc), 4, *ww, ow, loc);
  g = reshape(permute(g, {0, 1, 2, 4, 3, 5}, loc), {n, c, oh, ow, taps}, loc);
  ValuesIndices m = max(g, 4, false, loc);
  std::vector<int64_t> flat;
  flat.reserve(static_cast<size_t>(oh * ow * taps));
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j)
      for (int64_t p = 0; p < wh->width; ++p)
        for (int64_t q = 0; q < ww->width; ++q)
          flat.push_back(wh->index[i * wh->width + p] * s[3] + ww->index[j * ww->width + q]);
  const Shape ts{n, c, oh, ow, taps};
  const Tensor table = expand(from_vector<int64_t>(flat, {oh, ow, taps}, loc), ts, loc);
  ValuesIndices r{m.values, squeeze(gather(table, 4, unsqueeze(m.indices, 4, loc), loc), 4, loc)};
  if (x.rank() == 3) r = {squeeze(r.values, 0, loc), squeeze(r.indices, 0, loc)};
  return r;
}

}  // namespace lt
