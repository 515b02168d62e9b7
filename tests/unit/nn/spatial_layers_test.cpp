// Conv1d, ConvTranspose2d, Upsample, AdaptiveAvgPool2d and AdaptiveMaxPool2d: PyTorch's
// state_dict names and shapes, its default initialization, forward as the functional op,
// gradients of the parameters against central differences, repr and constructor errors. The
// functional ops' values are PyTorch's (tests/unit/frontend/spatial_reference_test.cpp).
#include <gtest/gtest.h>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;
using testing::expect_gradients_match;
using testing::values;

std::map<std::string, Shape> shapes(const TensorDict& state) {
  std::map<std::string, Shape> out;
  for (const auto& [name, t] : state) out[name] = t.shape();
  return out;
}

/// Every value within [-bound, bound] (as f32) and the extremes near both ends: U(-bound, bound).
void expect_uniform_within(const Tensor& t, double bound) {
  const std::vector<double> v = values(t);
  const double hi = *std::max_element(v.begin(), v.end());
  const double lo = *std::min_element(v.begin(), v.end());
  EXPECT_LE(hi, static_cast<float>(bound));
  EXPECT_GE(lo, -static_cast<float>(bound));
  if (v.size() >= 1000) {
    EXPECT_GT(hi, 0.95 * bound);
    EXPECT_LT(lo, -0.95 * bound);
  }
}

TEST(Conv1d, StateDictInitAndForward) {
  manual_seed(1);
  nn::Conv1d conv(16, 64, 5, {.stride = 2, .padding = 1, .dilation = 2, .groups = 2});
  EXPECT_EQ(shapes(conv.state_dict()),
            (std::map<std::string, Shape>{{"weight", {64, 8, 5}}, {"bias", {64}}}));
  expect_uniform_within(conv.weight, 1 / std::sqrt(8.0 * 5));  // fan_in = 16 / 2 * 5
  expect_uniform_within(conv.bias, 1 / std::sqrt(8.0 * 5));
  const Tensor x = randn({2, 16, 20});
  EXPECT_TRUE(AllClose(conv.forward(x), conv1d(x, conv.weight, conv.bias, {2, 1, 2, 2}), 0, 0));
  EXPECT_EQ(conv.forward(x).shape(), (Shape{2, 64, 7}));
  EXPECT_EQ(conv.forward(randn({16, 20})).shape(), (Shape{64, 7}));  // unbatched
  EXPECT_EQ(conv.extra_repr(),
            "16, 64, kernel_size=(5,), stride=(2,), padding=(1,), dilation=(2,), groups=2");
  nn::Conv1d plain(3, 4, 3, {.bias = false});
  EXPECT_EQ(shapes(plain.state_dict()), (std::map<std::string, Shape>{{"weight", {4, 3, 3}}}));
  EXPECT_EQ(plain.extra_repr(), "3, 4, kernel_size=(3,), stride=(1,), bias=false");
}

TEST(Conv1d, ConstructorAndForwardErrors) {
  EXPECT_EQ(error_of([] { nn::Conv1d(4, 3, 3, {.groups = 2}); }),
            "Conv1d: out_channels must be divisible by groups");
  EXPECT_EQ(error_of([] { nn::Conv1d(3, 4, 3, {.groups = 2}); }),
            "Conv1d: in_channels must be divisible by groups");
  EXPECT_EQ(error_of([] { nn::Conv1d(4, 4, 3, {.groups = 0}); }),
            "Conv1d: groups must be a positive integer");
  EXPECT_EQ(error_of([] { nn::Conv1d(4, 4, 3, {.stride = 0}); }),
            "Conv1d: stride 0 and dilation 1 must be >= 1");
  nn::Conv1d conv(4, 2, 3);
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { conv.forward(zeros({2, 3, 7})); }),
            "conv1d: Given groups=1, weight of size [2, 4, 3], expected input[2, 3, 7] to have 4 "
            "channels, but got 3 channels instead (operands: f32[2,3,7], f32[2,4,3], f32[2]) at "
            "spatial_layers_test.cpp:" + std::to_string(line));
}

TEST(ConvTranspose2d, StateDictInitAndForward) {
  manual_seed(2);
  nn::ConvTranspose2d conv(32, 24, {3, 2},
                           {.stride = {2, 1}, .padding = 1, .output_padding = {1, 0},
                            .groups = 2, .dilation = {1, 2}});
  // PyTorch's layout [in, out / groups, kh, kw], and its fan_in from that shape: 12 * 3 * 2.
  EXPECT_EQ(shapes(conv.state_dict()),
            (std::map<std::string, Shape>{{"weight", {32, 12, 3, 2}}, {"bias", {24}}}));
  expect_uniform_within(conv.weight, 1 / std::sqrt(72.0));
  expect_uniform_within(conv.bias, 1 / std::sqrt(72.0));
  const Tensor x = randn({2, 32, 5, 4});
  const Tensor y = conv.forward(x);
  // (5 - 1) 2 - 2 + 2 + 1 + 1 = 10 and (4 - 1) 1 - 2 + 2 (2 - 1) + 0 + 1 = 4
  EXPECT_EQ(y.shape(), (Shape{2, 24, 10, 4}));
  EXPECT_TRUE(AllClose(
      y, conv_transpose2d(x, conv.weight, conv.bias, {{2, 1}, {1, 1}, {1, 0}, 2, {1, 2}}), 0, 0));
  EXPECT_EQ(conv.extra_repr(),
            "32, 24, kernel_size=(3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), "
            "output_padding=(1, 0), groups=2");
  nn::ConvTranspose2d plain(2, 3, 2, {.bias = false});
  EXPECT_EQ(shapes(plain.state_dict()),
            (std::map<std::string, Shape>{{"weight", {2, 3, 2, 2}}}));
  EXPECT_EQ(plain.extra_repr(), "2, 3, kernel_size=(2, 2), stride=(1, 1), bias=false");
  EXPECT_EQ(error_of([] { nn::ConvTranspose2d(4, 3, 3, {.groups = 2}); }),
            "ConvTranspose2d: out_channels must be divisible by groups");
  nn::ConvTranspose2d bad(4, 4, 3, {.output_padding = 1});  // PyTorch, too, fails at forward
  EXPECT_TRUE(error_of([&] { bad.forward(zeros({1, 4, 3, 3})); })
                  .starts_with("conv_transpose2d: output padding must be smaller than either "
                               "stride or dilation, but got output_padding_height: 1"));
}

TEST(ConvTranspose2d, BoundIsFromTheWeightsSecondDim) {
  manual_seed(3);
  nn::ConvTranspose2d conv(4, 64, 3);  // fan_in = 64 * 9 (conv2d's would be 4 * 9)
  expect_uniform_within(conv.weight, 1 / std::sqrt(576.0));
}

TEST(SpatialLayers, ParameterGradientsMatchCentralDifferences) {
  manual_seed(4);
  nn::Conv1d c1(4, 6, 3, {.stride = 2, .padding = 2, .dilation = 2, .groups = 2});
  c1.to(DType::F64);
  const Tensor x1 = randn({2, 4, 9}, DType::F64);
  expect_gradients_match(c1, [&] { return c1.forward(x1); });
  // output_padding below the stride (one row), then at least the stride (below the dilation).
  nn::ConvTranspose2d t1(4, 6, {3, 2}, {.stride = 2, .padding = 1, .output_padding = 1,
                                        .groups = 2});
  t1.to(DType::F64);
  const Tensor x2 = randn({2, 4, 3, 4}, DType::F64);
  expect_gradients_match(t1, [&] { return t1.forward(x2); });
  nn::ConvTranspose2d t2(2, 3, 3, {.stride = 1, .padding = {0, 1}, .output_padding = 1,
                                   .dilation = 2});
  t2.to(DType::F64);
  const Tensor x3 = randn({1, 2, 3, 4}, DType::F64);
  expect_gradients_match(t2, [&] { return t2.forward(x3); });
}

TEST(Upsample, ForwardIsInterpolate) {
  manual_seed(5);
  const Tensor x = randn({2, 3, 4, 5});
  nn::Upsample up({.scale_factor = {2.0}, .mode = "bilinear"});
  EXPECT_TRUE(AllClose(up.forward(x),
                       interpolate(x, {.scale_factor = {2.0}, .mode = "bilinear"}), 0, 0));
  EXPECT_EQ(up.forward(x).shape(), (Shape{2, 3, 8, 10}));
  EXPECT_TRUE(up.state_dict().empty());
  EXPECT_EQ(up.extra_repr(), "scale_factor=2.0, mode=bilinear");
  nn::Upsample sized({.size = {3, 4}});
  EXPECT_EQ(sized.forward(x).shape(), (Shape{2, 3, 3, 4}));
  EXPECT_EQ(sized.extra_repr(), "size=(3, 4), mode=nearest");
  nn::Upsample corners({.scale_factor = {1.5, 2}, .mode = "bilinear", .align_corners = true});
  EXPECT_EQ(corners.extra_repr(),
            "scale_factor=(1.5, 2.0), mode=bilinear, align_corners=true");
  EXPECT_EQ(error_of([] { nn::Upsample({.size = {2}, .scale_factor = {2.0}}); }),
            "Upsample: only one of size or scale_factor should be defined");
  EXPECT_EQ(error_of([] { nn::Upsample({}); }),
            "Upsample: either size or scale_factor should be defined");
  EXPECT_EQ(error_of([] { nn::Upsample({.size = {2}, .mode = "area"}); }),
            "Upsample: mode area is not implemented (nearest and bilinear are)");
  EXPECT_EQ(error_of([] { nn::Upsample({.size = {2}, .align_corners = false}); }),
            "Upsample: align_corners option can only be set with the interpolating modes: "
            "linear | bilinear | bicubic | trilinear");
}

TEST(AdaptivePools, AnyOutputSize) {
  manual_seed(6);
  const Tensor x = randn({2, 3, 5, 7});
  nn::AdaptiveAvgPool2d avg({3, 4});
  EXPECT_TRUE(AllClose(avg.forward(x), adaptive_avg_pool2d(x, {3, 4}), 0, 0));
  EXPECT_EQ(avg.forward(x).shape(), (Shape{2, 3, 3, 4}));
  nn::AdaptiveMaxPool2d max(3);
  EXPECT_EQ(max.extra_repr(), "output_size=(3, 3)");
  const ValuesIndices m = max.forward_with_indices(x);
  EXPECT_TRUE(AllClose(max.forward(x), m.values, 0, 0));
  EXPECT_EQ(m.indices.shape(), (Shape{2, 3, 3, 3}));
  // Each index names the value it came with, in the input's plane.
  const std::vector<double> xv = values(x), mv = values(m.values);
  const std::vector<int64_t> iv = m.indices.to_vector<int64_t>();
  for (size_t k = 0; k < iv.size(); ++k) EXPECT_EQ(mv[k], xv[(k / 9) * 35 + iv[k]]) << k;
  EXPECT_TRUE(max.state_dict().empty());
  EXPECT_EQ(error_of([] { nn::AdaptiveMaxPool2d({0, 2}); }),
            "AdaptiveMaxPool2d: output_size (0, 2) must be >= 1");
}

// The global pool stays the mean and a size dividing the input stays one avg_pool2d, as the
// trainers' compiled graphs have them; max of such a size is one max_pool2d.
TEST(AdaptivePools, WholeWindowsAreThePoolingRows) {
  manual_seed(7);
  const Tensor x = randn({2, 3, 6, 8});
  EXPECT_TRUE(AllClose(nn::AdaptiveAvgPool2d(1).forward(x), mean(x, {2, 3}, true), 0, 0));
  EXPECT_TRUE(AllClose(nn::AdaptiveAvgPool2d({3, 2}).forward(x),
                       avg_pool2d(x, {{2, 4}, {2, 4}, {0, 0}}), 0, 0));
  EXPECT_TRUE(AllClose(nn::AdaptiveMaxPool2d({3, 2}).forward(x),
                       max_pool2d(x, {{2, 4}, {2, 4}, {0, 0}}), 0, 0));
}

}  // namespace
}  // namespace lt
