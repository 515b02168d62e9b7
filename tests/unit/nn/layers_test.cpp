// Each layer's forward against a computation on the host (or the functional op it wraps), and
// the errors of bad arguments and inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::error_of;
using testing::values;

// Inputs [..., in] fold to [rows, in] inside linear: the result and every gradient must be those
// of the 2-D input, and an empty batch still works.
TEST(Linear, LeadingDimsGiveTheGradientsOfTheFlatInput) {
  manual_seed(2);
  nn::Linear fc(5, 3);
  const Tensor x3 = randn({2, 4, 5});
  auto grads = [&](const Tensor& x) {
    fc.zero_grad();
    Tensor xi = x.detach();
    xi.requires_grad_();
    Tensor y = fc.forward(xi);
    sum(y * y).backward();
    return std::vector<Tensor>{y, xi.grad(), fc.weight.grad(), fc.bias.grad()};
  };
  const std::vector<Tensor> folded = grads(x3), flat = grads(reshape(x3, {8, 5}));
  EXPECT_EQ(folded[0].shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(folded[1].shape(), (Shape{2, 4, 5}));
  EXPECT_TRUE(AllClose(reshape(folded[0], {8, 3}), flat[0]));
  EXPECT_TRUE(AllClose(reshape(folded[1], {8, 5}), flat[1]));
  EXPECT_TRUE(AllClose(folded[2], flat[2]));
  EXPECT_TRUE(AllClose(folded[3], flat[3]));
  EXPECT_EQ(fc.forward(zeros({0, 4, 5})).shape(), (Shape{0, 4, 3}));
}

TEST(Linear, IsXTimesWTransposedPlusB) {
  manual_seed(1);
  nn::Linear fc(5, 3);
  EXPECT_EQ(fc.weight.shape(), (Shape{3, 5}));
  EXPECT_EQ(fc.bias.shape(), (Shape{3}));
  const Tensor x = randn({4, 5});
  const auto xv = values(x), w = values(fc.weight), b = values(fc.bias);
  std::vector<double> want(4 * 3);
  for (int n = 0; n < 4; ++n)
    for (int o = 0; o < 3; ++o) {
      double acc = b[o];
      for (int i = 0; i < 5; ++i) acc += xv[n * 5 + i] * w[o * 5 + i];
      want[n * 3 + o] = acc;
    }
  EXPECT_TRUE(AllClose(fc.forward(x), cast(from_vector<double>(want, {4, 3}), DType::F32)));
  // Leading batch dims, and no bias.
  nn::Linear nobias(5, 3, false);
  EXPECT_FALSE(nobias.bias.defined());
  EXPECT_EQ(nobias.parameters().size(), 1u);
  EXPECT_TRUE(AllClose(nobias.forward(reshape(x, {2, 2, 5})),
                       reshape(matmul(x, nobias.weight, false, true), {2, 2, 3})));
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { fc.forward(zeros({4, 6})); }),
            "Linear(in_features=5): input f32[4,6] does not end in 5 features at "
            "layers_test.cpp:" + std::to_string(line));
  EXPECT_EQ(error_of([] { nn::Linear(-1, 2); }),
            "Linear: sizes must be >= 0, got in_features=-1, out_features=2");
}

/// Direct convolution on the host: zero padding, stride, dilation, groups.
std::vector<double> host_conv(const std::vector<double>& x, Shape xs, const std::vector<double>& w,
                              Shape ws, const std::vector<double>& b, nn::Conv2dOptions o,
                              Shape* out_shape) {
  const int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], oc = ws[0], icg = ws[1],
                kh = ws[2], kw = ws[3];
  const int64_t oh = (h + 2 * o.padding.h - o.dilation.h * (kh - 1) - 1) / o.stride.h + 1;
  const int64_t ow = (wd + 2 * o.padding.w - o.dilation.w * (kw - 1) - 1) / o.stride.w + 1;
  *out_shape = {n, oc, oh, ow};
  std::vector<double> y(n * oc * oh * ow);
  const int64_t ocg = oc / o.groups;
  for (int64_t in = 0; in < n; ++in)
    for (int64_t co = 0; co < oc; ++co)
      for (int64_t yy = 0; yy < oh; ++yy)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = b.empty() ? 0 : b[co];
          const int64_t g = co / ocg;
          for (int64_t ci = 0; ci < icg; ++ci)
            for (int64_t ky = 0; ky < kh; ++ky)
              for (int64_t kx = 0; kx < kw; ++kx) {
                const int64_t iy = yy * o.stride.h - o.padding.h + ky * o.dilation.h;
                const int64_t ix = xx * o.stride.w - o.padding.w + kx * o.dilation.w;
                if (iy < 0 || iy >= h || ix < 0 || ix >= wd) continue;
                const int64_t cin = g * icg + ci;
                acc += x[((in * c + cin) * h + iy) * wd + ix] *
                       w[((co * icg + ci) * kh + ky) * kw + kx];
              }
          y[((in * oc + co) * oh + yy) * ow + xx] = acc;
        }
  return y;
}

TEST(Conv2d, MatchesTheFunctionalOpAndADirectConvolution) {
  manual_seed(2);
  const nn::Conv2dOptions o{.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 2};
  nn::Conv2d conv(4, 6, {3, 2}, o);
  EXPECT_EQ(conv.weight.shape(), (Shape{6, 2, 3, 2}));
  EXPECT_EQ(conv.bias.shape(), (Shape{6}));
  const Tensor x = randn({2, 4, 7, 6});
  const Tensor y = conv.forward(x);
  EXPECT_TRUE(AllClose(y, conv2d(x, conv.weight, conv.bias, {{2, 1}, {1, 2}, {1, 2}, 2}), 0, 0));
  Shape ys;
  const auto want = host_conv(values(x), x.shape(), values(conv.weight), conv.weight.shape(),
                              values(conv.bias), o, &ys);
  EXPECT_TRUE(AllClose(y, cast(from_vector<double>(want, ys), DType::F32), 1e-5, 1e-5));

  nn::Conv2d nobias(4, 2, 1, {.bias = false});
  EXPECT_EQ(nobias.named_parameters().size(), 1u);
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { conv.forward(zeros({2, 3, 7, 6})); }),
            "Conv2d(in_channels=4): input f32[2,3,7,6] is not [N, 4, H, W] at layers_test.cpp:" +
                std::to_string(line));
  EXPECT_EQ(error_of([] { nn::Conv2d(4, 6, 3, {.groups = 4}); }),
            "Conv2d: groups=4 must be >= 1 and divide in_channels=4 and out_channels=6");
}

// The options struct, defaulted and passed by value on the stack, arrives as written. GCC 12's
// 256-bit constant stores under -march=native on Skylake-AVX512 to Ice Lake tunings wrote
// {stride 1, padding 0} as four ones here (CMakeLists.txt turns those stores off).
TEST(Conv2d, DefaultOptionsArriveAsWritten) {
  nn::Conv2d conv(1, 2, 3);
  EXPECT_EQ(conv.options.stride, nn::Size2d(1));
  EXPECT_EQ(conv.options.padding, nn::Size2d(0));
  EXPECT_EQ(conv.options.dilation, nn::Size2d(1));
  EXPECT_EQ(conv.options.groups, 1);
  EXPECT_TRUE(conv.options.bias);
  EXPECT_EQ(conv.forward(zeros({1, 1, 4, 4})).shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(conv.extra_repr(), "1, 2, kernel_size=(3, 3), stride=(1, 1)");
}

/// Pooling on the host: max over the window's taps inside the image, or their sum / (kh * kw).
std::vector<double> host_pool(const std::vector<double>& x, Shape xs, int64_t k, int64_t s,
                              int64_t p, bool max, Shape* out_shape) {
  const int64_t planes = xs[0] * xs[1], h = xs[2], w = xs[3];
  const int64_t oh = (h + 2 * p - k) / s + 1, ow = (w + 2 * p - k) / s + 1;
  *out_shape = {xs[0], xs[1], oh, ow};
  std::vector<double> y;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t yy = 0; yy < oh; ++yy)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double acc = max ? -std::numeric_limits<double>::infinity() : 0;
        for (int64_t ky = 0; ky < k; ++ky)
          for (int64_t kx = 0; kx < k; ++kx) {
            const int64_t iy = yy * s - p + ky, ix = xx * s - p + kx;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
            const double v = x[(pl * h + iy) * w + ix];
            acc = max ? std::max(acc, v) : acc + v;
          }
        y.push_back(max ? acc : acc / static_cast<double>(k * k));
      }
  return y;
}

TEST(Pooling, MaxAndAvgMatchTheHost) {
  manual_seed(3);
  const Tensor x = randn({2, 3, 7, 7});
  Shape s;
  nn::MaxPool2d max(3, 2, 1);
  EXPECT_EQ(max.stride, nn::Size2d(2));
  auto want = host_pool(values(x), x.shape(), 3, 2, 1, true, &s);
  EXPECT_TRUE(AllClose(max.forward(x), cast(from_vector<double>(want, s), DType::F32), 0, 0));
  nn::AvgPool2d avg(3, 2, 1);
  want = host_pool(values(x), x.shape(), 3, 2, 1, false, &s);
  EXPECT_TRUE(AllClose(avg.forward(x), cast(from_vector<double>(want, s), DType::F32)));
  nn::MaxPool2d halves(2);  // stride defaults to the kernel
  EXPECT_EQ(halves.forward(x).shape(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(error_of([] { nn::MaxPool2d(2, 1, 2); }),
            "MaxPool2d: padding (2, 2) must be between 0 and half the kernel_size (2, 2)");
}

TEST(Pooling, AdaptiveAverageOfMultiplesAndGlobal) {
  manual_seed(4);
  const Tensor x = randn({2, 3, 4, 6});
  const auto xv = values(x);
  std::vector<double> want;
  for (int64_t pl = 0; pl < 6; ++pl)
    for (int64_t oy = 0; oy < 2; ++oy)
      for (int64_t ox = 0; ox < 3; ++ox) {
        double acc = 0;
        for (int64_t y = 2 * oy; y < 2 * oy + 2; ++y)
          for (int64_t c = 2 * ox; c < 2 * ox + 2; ++c) acc += xv[(pl * 4 + y) * 6 + c];
        want.push_back(acc / 4);
      }
  nn::AdaptiveAvgPool2d pool({2, 3});
  EXPECT_TRUE(AllClose(pool.forward(x), cast(from_vector<double>(want, {2, 3, 2, 3}), DType::F32)));
  nn::AdaptiveAvgPool2d global(1);
  EXPECT_TRUE(AllClose(global.forward(x), mean(x, {2, 3}, true)));
  // Other sizes take PyTorch's windows (tests/unit/nn/spatial_layers_test.cpp).
  EXPECT_EQ(pool.forward(zeros({1, 1, 5, 7})).shape(), (Shape{1, 1, 2, 3}));
}

TEST(Flatten, MergesTheGivenDims) {
  const Tensor x = arange(0, 120, 1, DType::F32);
  const Tensor x4 = reshape(x, {2, 3, 4, 5});
  EXPECT_EQ(nn::Flatten().forward(x4).shape(), (Shape{2, 60}));
  EXPECT_EQ(nn::Flatten(1, 2).forward(x4).shape(), (Shape{2, 12, 5}));
  EXPECT_EQ(nn::Flatten().forward(x4).to_vector<float>(), x.to_vector<float>());
}

TEST(Embedding, LooksUpRowsById) {
  manual_seed(5);
  nn::Embedding emb(7, 3);
  const Tensor ids = from_vector<int64_t>({6, 0, 2, 2}, {2, 2});
  const Tensor y = emb.forward(ids);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  const auto w = values(emb.weight), yv = values(y);
  const int64_t id[] = {6, 0, 2, 2};
  for (int k = 0; k < 4; ++k)
    for (int d = 0; d < 3; ++d) EXPECT_EQ(yv[k * 3 + d], w[id[k] * 3 + d]);
}

TEST(Activations, ReluAndTanhGelu) {
  const std::vector<double> xs = {-3, -1, -0.25, 0, 0.5, 2, 4};
  const Tensor x = from_vector<double>(xs, {7});
  std::vector<double> relu_want, gelu_want;
  const double c = std::sqrt(2 / 3.14159265358979323846);
  for (double v : xs) {
    relu_want.push_back(v > 0 ? v : 0);
    gelu_want.push_back(0.5 * v * (1 + std::tanh(c * (v + 0.044715 * v * v * v))));
  }
  EXPECT_EQ(values(nn::ReLU().forward(x)), relu_want);
  nn::GELU gelu("tanh");
  EXPECT_TRUE(AllClose(gelu.forward(x), from_vector<double>(gelu_want, {7}), 1e-12, 1e-12));
  EXPECT_EQ(error_of([] { nn::GELU("fast"); }),
            "GELU: approximate must be \"none\" or \"tanh\", got \"fast\"");
}

// The exact form, PyTorch's default: x Phi(x) with the normal CDF written through erfc (another
// libm function than the erf the op uses), and Phi(1), Phi(2) from the normal table.
TEST(Activations, ExactGeluIsTheDefault) {
  const std::vector<double> xs = {-6, -3, -1, -0.25, 0, 0.5, 1, 2, 4};
  std::vector<double> want;
  for (double v : xs) want.push_back(v * 0.5 * std::erfc(-v / std::sqrt(2.0)));
  const Tensor x = from_vector<double>(xs, {9});
  nn::GELU gelu;
  EXPECT_EQ(gelu.approximate, "none");
  const Tensor y = gelu.forward(x);
  EXPECT_TRUE(AllClose(y, from_vector<double>(want, {9}), 1e-15, 1e-14));
  EXPECT_NEAR(values(y)[6], 0.8413447460685429, 1e-15);
  EXPECT_NEAR(values(y)[7], 2 * 0.9772498680518208, 1e-15);
  EXPECT_TRUE(AllClose(cast(gelu.forward(cast(x, DType::F32)), DType::F64),
                       from_vector<double>(want, {9}), 1e-6, 1e-6));
  EXPECT_TRUE(AllClose(gelu.forward(x), lt::gelu(x)));
  EXPECT_THAT(error_of([&] { lt::gelu(x, "exact"); }),
              ::testing::StartsWith("gelu: approximate must be \"none\" or \"tanh\", got "
                                    "\"exact\" (operands: f64[9]) at "));
}

TEST(Dropout, OffInEvalSameMaskForTheSameSeed) {
  manual_seed(6);
  const Tensor x = rand({100, 100}) + 1.0;  // no zeros of its own
  nn::Dropout drop(0.3);
  manual_seed(7);
  const auto a = values(drop.forward(x));
  manual_seed(7);
  const auto b = values(drop.forward(x));
  EXPECT_EQ(a, b);
  manual_seed(8);
  EXPECT_NE(values(drop.forward(x)), a);
  const auto xv = values(x);
  int64_t zeros_seen = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == 0) {
      ++zeros_seen;
    } else {
      ASSERT_NEAR(a[i], xv[i] / 0.7, 1e-6 * a[i]);
    }
  }
  EXPECT_NEAR(static_cast<double>(zeros_seen) / 10000, 0.3, 0.02);  // 4.4 standard deviations
  drop.eval();
  EXPECT_EQ(values(drop.forward(x)), xv);
  EXPECT_EQ(error_of([] { nn::Dropout(1.5); }), "Dropout: p = 1.5 outside [0, 1]");
}

TEST(Sequential, AppliesInOrderAndIndexes) {
  nn::Sequential seq;
  EXPECT_EQ(seq.forward(full({2}, 3)).to_vector<float>(), (std::vector<float>{3, 3}));
  seq.push_back([](const Tensor& x) { return x * 2.0; });
  seq.push_back(std::make_shared<nn::ReLU>());
  seq.push_back([](const Tensor& x) { return x - 1.0; });
  EXPECT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq.forward(from_vector<float>({-1, 2}, {2})).to_vector<float>(),
            (std::vector<float>{-1, 3}));  // relu(2x) - 1
  EXPECT_EQ(seq[1]->name(), "ReLU");
  EXPECT_EQ(seq[0]->name(), "Functional");
  EXPECT_NE(seq.at<nn::ReLU>(1), nullptr);
  EXPECT_EQ(error_of([&] { seq.at<nn::Linear>(1); }),
            "Sequential::at: module 1 is a ReLU, not the type asked for");
  EXPECT_EQ(error_of([&] { seq[3]; }), "Sequential: index 3 out of range for 3 modules");
  std::vector<std::string> names;
  for (const auto& [name, _] : seq.named_children()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"0", "1", "2"}));
}

}  // namespace
}  // namespace lt
