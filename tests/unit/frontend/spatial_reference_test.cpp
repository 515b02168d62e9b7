// conv1d, conv_transpose2d, interpolate, the adaptive pools and max_pool2d with indices and
// dilation against PyTorch 1.13: every case of
// tests/data/spatial_cases.json (made by spatial_cases.py: f64 inputs, the output, the max
// pool's indices and the gradients of sum(y * c)), to 1e-10 relative; and PyTorch's errors for
// bad arguments.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using json = nlohmann::json;
using testing::error_of;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_SPATIAL_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

Shape shape_of(const json& t) { return t["shape"].get<Shape>(); }

Tensor tensor(const json& t) {
  return from_vector<double>(t["values"].get<std::vector<double>>(), shape_of(t));
}

std::vector<int64_t> pair(const json& v) { return v.get<std::vector<int64_t>>(); }

/// The case's op on its inputs: the output, and the max pool's indices.
ValuesIndices run(const json& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  const std::string op = c["op"];
  const json& a = c["args"];
  if (op == "conv1d")
    return {conv1d(x, w, b,
                   {a["stride"].get<int64_t>(), a["padding"].get<int64_t>(),
                    a["dilation"].get<int64_t>(), a["groups"].get<int64_t>()}),
            {}};
  if (op == "conv_transpose2d")
    return {conv_transpose2d(x, w, b,
                             {pair(a["stride"]), pair(a["padding"]), pair(a["output_padding"]),
                              a["groups"].get<int64_t>(), pair(a["dilation"])}),
            {}};
  if (op == "interpolate") {
    InterpolateOptions o;
    if (a.contains("size")) o.size = a["size"].get<std::vector<int64_t>>();
    if (a.contains("scale_factor")) o.scale_factor = a["scale_factor"].get<std::vector<double>>();
    o.mode = a["mode"];
    if (!a["align_corners"].is_null()) o.align_corners = a["align_corners"].get<bool>();
    return {interpolate(x, o), {}};
  }
  if (op == "max_pool2d_with_indices")
    return max_pool2d_with_indices(x, {.kernel = pair(a["kernel"]),
                                       .stride = pair(a["stride"]),
                                       .padding = pair(a["padding"]),
                                       .ceil_mode = a["ceil_mode"].get<bool>(),
                                       .dilation = pair(a["dilation"])});
  const auto size = a["output_size"].get<std::vector<int64_t>>();
  if (op == "adaptive_avg_pool2d") return {adaptive_avg_pool2d(x, size), {}};
  if (op == "adaptive_max_pool2d") return adaptive_max_pool2d_with_indices(x, size);
  throw Error("unknown op " + op);
}

void expect_near(const Tensor& got, const json& want, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(got.shape(), shape_of(want));
  const std::vector<double> g = got.to_vector<double>();
  const auto w = want["values"].get<std::vector<double>>();
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-10 * std::max(1.0, std::abs(w[i]))) << "element " << i;
}

TEST(SpatialReference, ValuesAndGradientsMatchPyTorch) {
  ASSERT_GT(cases().size(), 80u);
  size_t with_gradients = 0;
  for (const json& c : cases()) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const json& in = c["inputs"];
    Tensor x = tensor(in["x"]).requires_grad_();
    Tensor w = in.contains("w") ? tensor(in["w"]).requires_grad_() : Tensor();
    Tensor b = in.contains("b") ? tensor(in["b"]).requires_grad_() : Tensor();
    const ValuesIndices y = run(c, x, w, b);
    expect_near(y.values, c["output"], "output");
    if (c.contains("indices")) {
      ASSERT_TRUE(y.indices.defined());
      EXPECT_EQ(y.indices.dtype(), DType::I64);
      EXPECT_EQ(y.indices.shape(), shape_of(c["indices"]));
      EXPECT_EQ(y.indices.to_vector<int64_t>(), c["indices"]["values"].get<std::vector<int64_t>>());
    }
    if (c["grads"].empty()) continue;  // the output only (spatial_cases.py says why)
    ++with_gradients;
    sum(y.values * tensor(c["cotangent"])).backward();
    for (const auto& [name, t] : std::vector<std::pair<std::string, Tensor>>{
             {"x", x}, {"w", w}, {"b", b}}) {
      if (!t.defined()) continue;
      ASSERT_TRUE(t.grad().defined()) << name;
      expect_near(t.grad(), c["grads"][name], "gradient of " + name);
    }
  }
  EXPECT_GT(with_gradients, cases().size() - 5);
}

/// The message without its " at file:line" suffix.
std::string reason(const std::function<void()>& f) {
  const std::string m = error_of(f);
  return m.substr(0, m.rfind(" at "));
}

Tensor f64(Shape s) { return zeros(std::move(s), DType::F64); }

TEST(SpatialReference, Conv1dErrorsArePyTorchs) {
  const Tensor x = f64({2, 3, 4}), w = f64({2, 3, 3});
  EXPECT_EQ(reason([&] { conv1d(f64({2, 3, 4, 5}), w); }),
            "conv1d: Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of "
            "size: [2, 3, 4, 5] (operands: f64[2,3,4,5], f64[2,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, f64({2, 3, 3, 3})); }),
            "conv1d: Expected 4-dimensional input for 4-dimensional weight [2, 3, 3, 3], but got "
            "3-dimensional input of size [2, 3, 4] instead (operands: f64[2,3,4], f64[2,3,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, f64({2, 2, 3})); }),
            "conv1d: Given groups=1, weight of size [2, 2, 3], expected input[2, 3, 4] to have 2 "
            "channels, but got 3 channels instead (operands: f64[2,3,4], f64[2,2,3])");
  EXPECT_EQ(reason([&] { conv1d(x, f64({2, 3, 5})); }),
            "conv1d: Calculated padded input size per channel: (4). Kernel size: (5). Kernel size "
            "can't be greater than actual input size (operands: f64[2,3,4], f64[2,3,5])");
  EXPECT_EQ(reason([&] { conv1d(x, w, {}, {.stride = 0}); }),
            "conv1d: non-positive stride is not supported (operands: f64[2,3,4], f64[2,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, w, {}, {.padding = -1}); }),
            "conv1d: negative padding is not supported (operands: f64[2,3,4], f64[2,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, w, {}, {.groups = 0}); }),
            "conv1d: non-positive groups is not supported (operands: f64[2,3,4], f64[2,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, f64({4, 1, 3}), {}, {.groups = 3}); }),
            "conv1d: Given groups=3, expected weight to be divisible by 3 at dimension 0, but got "
            "weight of size [[4, 1, 3]] instead (operands: f64[2,3,4], f64[4,1,3])");
  EXPECT_EQ(reason([&] { conv1d(x, w, {}, {.groups = 4}); }),
            "conv1d: Given groups=4, expected weight to be at least 4 at dimension 0, but got "
            "weight of size [2, 3, 3] instead (operands: f64[2,3,4], f64[2,3,3])");
  EXPECT_EQ(reason([&] { conv1d(x, w, f64({3})); }),
            "conv1d: Given weight of size [2, 3, 3], expected bias to be 1-dimensional with 2 "
            "elements, but got bias of size [3] instead (operands: f64[2,3,4], f64[2,3,3], "
            "f64[3])");
  const int line = __LINE__ + 1;
  const std::string m = error_of([&] { conv1d(x, w, {}, {.dilation = 0}); });
  EXPECT_EQ(m, "conv1d: dilation should be greater than zero, but got 0 (operands: f64[2,3,4], "
               "f64[2,3,3]) at spatial_reference_test.cpp:" + std::to_string(line));
}

TEST(SpatialReference, ConvTranspose2dErrorsArePyTorchs) {
  const Tensor x = f64({1, 4, 3, 3}), w = f64({4, 2, 3, 3});
  const std::string ops = " (operands: f64[1,4,3,3], f64[4,2,3,3])";
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.output_padding = {1, 1}}); }),
            "conv_transpose2d: output padding must be smaller than either stride or dilation, "
            "but got output_padding_height: 1 output_padding_width: 1 stride_height: 1 "
            "stride_width: 1 dilation_height: 1 dilation_width: 1" + ops);
  EXPECT_EQ(reason([&] {
              conv_transpose2d(x, w, {}, {.stride = {2, 1}, .output_padding = {1, 1}});
            }),
            "conv_transpose2d: output padding must be smaller than either stride or dilation, "
            "but got output_padding_height: 1 output_padding_width: 1 stride_height: 2 "
            "stride_width: 1 dilation_height: 1 dilation_width: 1" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, f64({3, 2, 3, 3})); }),
            "conv_transpose2d: Given transposed=1, weight of size [3, 2, 3, 3], expected "
            "input[1, 4, 3, 3] to have 3 channels, but got 4 channels instead (operands: "
            "f64[1,4,3,3], f64[3,2,3,3])");
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.groups = 3}); }),
            "conv_transpose2d: Given groups=3, expected weight to be divisible by 3 at dimension "
            "0, but got weight of size [[4, 2, 3, 3]] instead" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, f64({3})); }),
            "conv_transpose2d: Given transposed=1, weight of size [4, 2, 3, 3], expected bias to "
            "be 1-dimensional with 2 elements, but got bias of size [3] instead (operands: "
            "f64[1,4,3,3], f64[4,2,3,3], f64[3])");
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.padding = {3, 3}}); }),
            "conv_transpose2d: Given input size per channel: (3 x 3). Calculated output size per "
            "channel: (-1 x -1). Output size is too small" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.stride = {0, 0}}); }),
            "conv_transpose2d: non-positive stride is not supported" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.padding = {-1, -1}}); }),
            "conv_transpose2d: negative padding is not supported" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.output_padding = {-1, -1}}); }),
            "conv_transpose2d: negative output_padding is not supported" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.dilation = {0, 0}}); }),
            "conv_transpose2d: dilation should be greater than zero, but got dilation_height: 0, "
            "dilation_width: 0" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.groups = 8}); }),
            "conv_transpose2d: Given groups=8, expected weight to be at least 8 at dimension 0, "
            "but got weight of size [4, 2, 3, 3] instead" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(x, w, {}, {.stride = {1, 1, 1}}); }),
            "conv_transpose2d: expected stride to be a single integer value or a list of 2 "
            "values to match the convolution dimensions, but got stride=[1, 1, 1]" + ops);
  EXPECT_EQ(reason([&] { conv_transpose2d(f64({4, 3}), w); }),
            "conv_transpose2d: Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, "
            "but got input of size: [4, 3] (operands: f64[4,3], f64[4,2,3,3])");
}

TEST(SpatialReference, InterpolateErrorsArePyTorchs) {
  const Tensor x = f64({1, 4, 3, 3});
  const std::string ops = " (operands: f64[1,4,3,3])";
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {2, 2}, .scale_factor = {2.0}}); }),
            "interpolate: only one of size or scale_factor should be defined" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {}); }),
            "interpolate: either size or scale_factor should be defined" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {2, 2}, .align_corners = true}); }),
            "interpolate: align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {2, 2}, .mode = "foo"}); }),
            "interpolate: Input Error: Only 3D, 4D and 5D input Tensors supported (got 4D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            "(got foo)" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {2, 2}, .mode = "bicubic"}); }),
            "interpolate: mode bicubic is not implemented (nearest and bilinear are)" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {2, 2, 2}}); }),
            "interpolate: Input and output must have the same number of spatial dimensions, but "
            "got input with spatial dimensions of [3, 3] and output size of [2, 2, 2]. Please "
            "provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, "
            "...,oK) format." + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.scale_factor = {2, 2, 2}}); }),
            "interpolate: Input and scale_factor must have the same number of spatial dimensions, "
            "but got input with spatial dimensions of [3, 3] and scale_factor of shape [2.0, 2.0, "
            "2.0]. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor "
            "in (s1, s2, ...,sK) format." + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.size = {0, 2}}); }),
            "interpolate: Input and output sizes should be greater than 0, but got input (H: 3, "
            "W: 3) output (H: 0, W: 2)" + ops);
  EXPECT_EQ(reason([&] { interpolate(x, {.scale_factor = {0.1}}); }),
            "interpolate: Input and output sizes should be greater than 0, but got input (H: 3, "
            "W: 3) output (H: 0, W: 0)" + ops);
  EXPECT_EQ(reason([&] { interpolate(f64({1, 2, 3}), {.size = {3}, .mode = "bilinear"}); }),
            "interpolate: Got 3D input, but bilinear mode needs 4D input (operands: f64[1,2,3])");
  EXPECT_EQ(reason([&] { interpolate(zeros({1, 1, 2, 2}, DType::I64), {.size = {3}}); }),
            "interpolate: \"compute_indices_weights_nearest\" not implemented for 'Long' "
            "(operands: i64[1,1,2,2])");
  EXPECT_EQ(reason([&] {
              interpolate(zeros({1, 1, 2, 2}, DType::I64), {.size = {3}, .mode = "bilinear"});
            }),
            "interpolate: \"compute_indices_weights_linear\" not implemented for 'Long' "
            "(operands: i64[1,1,2,2])");
}

TEST(SpatialReference, AdaptivePoolErrorsArePyTorchs) {
  EXPECT_EQ(reason([] { adaptive_avg_pool2d(f64({2, 3}), {2, 2}); }),
            "adaptive_avg_pool2d: Expected 3D or 4D tensor, but got [2, 3] (operands: f64[2,3])");
  EXPECT_EQ(reason([] { adaptive_max_pool2d(f64({2, 3}), {2, 2}); }),
            "adaptive_max_pool2d: Expected 3D or 4D tensor, but got: [2, 3] (operands: f64[2,3])");
  EXPECT_EQ(reason([] { adaptive_avg_pool2d(f64({1, 2, 3, 3}), {2, 2, 2}); }),
            "adaptive_avg_pool2d: output_size must be 2 (operands: f64[1,2,3,3])");
  EXPECT_EQ(reason([] { adaptive_max_pool2d(f64({1, 2, 0, 3}), {2, 2}); }),
            "adaptive_max_pool2d: Expected input to have non-zero size for non-batch dimensions, "
            "but input has sizes [1, 2, 0, 3] with dimension 2 being empty (operands: "
            "f64[1,2,0,3])");
  EXPECT_EQ(reason([] { adaptive_max_pool2d(f64({1, 4, 3, 3}), {2, -1}); }),
            "adaptive_max_pool2d: Trying to create tensor with negative dimension -1: [1, 4, 2, "
            "-1] (operands: f64[1,4,3,3])");
  EXPECT_EQ(reason([] { adaptive_avg_pool2d(zeros({1, 2, 2, 3}, DType::I64), {1, 2}); }),
            "adaptive_avg_pool2d: \"adaptive_avg_pool2d\" not implemented for 'Long' (operands: "
            "i64[1,2,2,3])");
  // An empty output size gives an empty result, as in PyTorch.
  EXPECT_EQ(adaptive_avg_pool2d(f64({1, 2, 2, 3}), {0, 2}).shape(), (Shape{1, 2, 0, 2}));
  EXPECT_EQ(adaptive_max_pool2d_with_indices(f64({1, 2, 2, 3}), {2, 0}).indices.shape(),
            (Shape{1, 2, 2, 0}));
}

TEST(SpatialReference, MaxPoolWithIndicesErrorsNameTheBadArgument) {
  EXPECT_EQ(reason([] { max_pool2d_with_indices(f64({2, 3}), {.kernel = {2, 2}}); }),
            "max_pool2d_with_indices: non-empty 3D or 4D (batch mode) tensor expected for input, "
            "got [2, 3] (operands: f64[2,3])");
  EXPECT_EQ(reason([] {
              max_pool2d_with_indices(f64({1, 1, 6, 6}), {.kernel = {2, 2}, .padding = {2, 2}});
            }),
            "max_pool2d_with_indices: bad kernel/stride/padding/dilation [2,2]/[2,2]/[2,2]/[1,1] "
            "(the padding at most half the kernel) (operands: f64[1,1,6,6])");
  EXPECT_EQ(reason([] {
              max_pool2d_with_indices(f64({1, 1, 4, 4}), {.kernel = {3, 3}, .dilation = {2, 2}});
            }),
            "max_pool2d_with_indices: window does not fit input [1, 1, 4, 4] (operands: "
            "f64[1,1,4,4])");
  EXPECT_EQ(reason([] { max_pool2d_with_indices(zeros({1, 1, 4, 4}, DType::I64)); }),
            "max_pool2d_with_indices: \"max_pool2d\" not implemented for 'Long' (operands: "
            "i64[1,1,4,4])");
  EXPECT_EQ(reason([] { avg_pool2d(f64({1, 1, 4, 4}), {.dilation = {2, 2}}); }),
            "avg_pool2d: dilation is for max pooling (operands: f64[1,1,4,4])");
  // A dilated max_pool2d is the values of max_pool2d_with_indices.
  const Tensor x = reshape(arange(0, 50, 1, DType::F64), {1, 2, 5, 5});
  const Pool2dOptions dilated{.kernel = {2, 2}, .stride = {1, 1}, .dilation = {2, 2}};
  EXPECT_EQ(max_pool2d(x, dilated).to_vector<double>(),
            max_pool2d_with_indices(x, dilated).values.to_vector<double>());
}

}  // namespace
}  // namespace lt
