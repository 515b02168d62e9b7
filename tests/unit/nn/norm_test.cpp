// BatchNorm2d and LayerNorm against formulas evaluated on the host: batch statistics in
// training, PyTorch's running averages (unbiased variance) over two steps and
// num_batches_tracked, running statistics in eval mode.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/all_close.h"
#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::AllClose;
using testing::values;

struct ChannelStats {
  std::vector<double> mean, var;  // var biased (divides by n)
};

ChannelStats channel_stats(const std::vector<double>& x, const Shape& s) {
  const int64_t n = s[0], c = s[1], hw = s[2] * s[3];
  ChannelStats st{std::vector<double>(c), std::vector<double>(c)};
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < hw; ++j) sum += x[(i * c + ch) * hw + j];
    st.mean[ch] = sum / static_cast<double>(n * hw);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < hw; ++j) {
        const double d = x[(i * c + ch) * hw + j] - st.mean[ch];
        sq += d * d;
      }
    st.var[ch] = sq / static_cast<double>(n * hw);
  }
  return st;
}

/// (x - mean) / sqrt(var + eps) * w + b per channel.
Tensor normalized(const std::vector<double>& x, const Shape& s, const std::vector<double>& mean,
                  const std::vector<double>& var, const std::vector<double>& w,
                  const std::vector<double>& b, double eps) {
  const int64_t c = s[1], hw = s[2] * s[3];
  std::vector<double> y(x.size());
  for (size_t k = 0; k < x.size(); ++k) {
    const int64_t ch = (static_cast<int64_t>(k) / hw) % c;
    y[k] = (x[k] - mean[ch]) / std::sqrt(var[ch] + eps) * w[ch] + b[ch];
  }
  return cast(from_vector<double>(y, s), DType::F32);
}

TEST(BatchNorm2d, TrainingStatisticsAndRunningAveragesOverTwoSteps) {
  nn::BatchNorm2d bn(3, {.eps = 1e-3, .momentum = 0.2});
  EXPECT_EQ(values(bn.weight), std::vector<double>(3, 1));
  EXPECT_EQ(values(bn.bias), std::vector<double>(3, 0));
  EXPECT_EQ(values(bn.running_mean), std::vector<double>(3, 0));
  EXPECT_EQ(values(bn.running_var), std::vector<double>(3, 1));
  const std::vector<double> w = {0.5, -1.5, 2}, b = {0.25, 0, -1};
  testing::set_values(bn.weight, w);
  testing::set_values(bn.bias, b);
  manual_seed(1);
  std::vector<double> rm(3, 0), rv(3, 1);
  for (int step = 0; step < 2; ++step) {
    const Shape s{4, 3, 2, 5};
    const Tensor x = randn(s) * 2.0 + static_cast<double>(step + 1);
    const auto xv = values(x);
    const ChannelStats st = channel_stats(xv, s);
    EXPECT_TRUE(AllClose(bn.forward(x), normalized(xv, s, st.mean, st.var, w, b, 1e-3), 1e-5,
                         1e-4));
    const double n = 4 * 2 * 5;
    for (int ch = 0; ch < 3; ++ch) {
      rm[ch] = 0.8 * rm[ch] + 0.2 * st.mean[ch];
      rv[ch] = 0.8 * rv[ch] + 0.2 * st.var[ch] * n / (n - 1);  // unbiased, as PyTorch
    }
    EXPECT_TRUE(AllClose(bn.running_mean, cast(from_vector<double>(rm, {3}), DType::F32)));
    EXPECT_TRUE(AllClose(bn.running_var, cast(from_vector<double>(rv, {3}), DType::F32)));
    EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), step + 1);
  }
  // Eval: the running statistics normalize, and stay as they are.
  bn.eval();
  const Tensor x = randn({2, 3, 2, 2});
  EXPECT_TRUE(AllClose(bn.forward(x), normalized(values(x), x.shape(), rm, rv, w, b, 1e-3),
                       1e-5, 1e-4));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 2);
  EXPECT_TRUE(AllClose(bn.running_mean, cast(from_vector<double>(rm, {3}), DType::F32)));
  bn.reset_running_stats();
  EXPECT_EQ(values(bn.running_var), std::vector<double>(3, 1));
  EXPECT_EQ(bn.num_batches_tracked.item<int64_t>(), 0);
}

TEST(BatchNorm2d, WithoutAffineOrTracking) {
  nn::BatchNorm2d plain(2, {.affine = false, .track_running_stats = false});
  EXPECT_TRUE(plain.parameters().empty());
  EXPECT_TRUE(plain.buffers().empty());
  manual_seed(2);
  const Tensor x = randn({3, 2, 2, 2});
  const ChannelStats st = channel_stats(values(x), x.shape());
  const Tensor want = normalized(values(x), x.shape(), st.mean, st.var, {1, 1}, {0, 0}, 1e-5);
  EXPECT_TRUE(AllClose(plain.forward(x), want, 1e-5, 1e-4));
  plain.eval();  // batch statistics in eval mode too
  EXPECT_TRUE(AllClose(plain.forward(x), want, 1e-5, 1e-4));
  const int line = __LINE__ + 1;
  EXPECT_EQ(testing::error_of([&] { plain.forward(zeros({3, 2, 4})); }),
            "BatchNorm2d(num_features=2): input f32[3,2,4] is not [N, 2, H, W] at norm_test.cpp:" +
                std::to_string(line));
}

TEST(BatchNorm, ReadsABf16InputWidened) {
  // batch_norm on a bf16 x (f32 parameters) is batch_norm on x widened to f32, bit for bit, in
  // training and eval, and x's gradient comes back in bf16, as the widening's gradient would.
  manual_seed(4);
  Tensor x = randn({4, 3, 2, 5});
  x.requires_grad_(true);
  const Tensor w = randn({3}), b = randn({3}), up = randn({4, 3, 2, 5});
  for (bool training : {true, false}) {
    SCOPED_TRACE(training ? "training" : "eval");
    Tensor grads[2];
    std::vector<double> ys[2];
    for (int widen = 0; widen < 2; ++widen) {
      const Tensor xb = cast(x, DType::BF16);
      const Tensor in = widen ? cast(xb, DType::F32) : xb;
      Tensor rm = zeros({3}), rv = ones({3});
      const Tensor y = batch_norm(in, w, b, rm, rv, training);
      EXPECT_EQ(y.dtype(), DType::F32);
      ys[widen] = values(y);
      x.zero_grad();
      sum(y * up).backward();
      grads[widen] = x.grad();
    }
    EXPECT_EQ(ys[0], ys[1]);
    EXPECT_EQ(values(grads[0]), values(grads[1]));
  }
  Tensor leaf = cast(randn({4, 3}), DType::BF16);
  leaf.requires_grad_(true);
  sum(batch_norm(leaf, ones({3}), zeros({3}), Tensor(), Tensor(), true)).backward();
  EXPECT_EQ(leaf.grad().dtype(), DType::BF16);
}

TEST(LayerNorm, NormalizesTheTrailingDims) {
  nn::LayerNorm ln({2, 3}, 1e-4);
  EXPECT_EQ(ln.weight.shape(), (Shape{2, 3}));
  const std::vector<double> w = {1, 2, 3, -1, 0.5, 0}, b = {0, 1, 0, 1, 0, 1};
  testing::set_values(ln.weight, w);
  testing::set_values(ln.bias, b);
  manual_seed(3);
  const Tensor x = randn({4, 2, 3});
  const auto xv = values(x);
  std::vector<double> want;
  for (int r = 0; r < 4; ++r) {
    double m = 0, v = 0;
    for (int j = 0; j < 6; ++j) m += xv[r * 6 + j] / 6;
    for (int j = 0; j < 6; ++j) v += (xv[r * 6 + j] - m) * (xv[r * 6 + j] - m) / 6;
    for (int j = 0; j < 6; ++j)
      want.push_back((xv[r * 6 + j] - m) / std::sqrt(v + 1e-4) * w[j] + b[j]);
  }
  EXPECT_TRUE(AllClose(ln.forward(x), cast(from_vector<double>(want, {4, 2, 3}), DType::F32),
                       1e-5, 1e-4));
  nn::LayerNorm plain({3}, 1e-5, false);
  EXPECT_TRUE(plain.parameters().empty());
  const Tensor y = plain.forward(x);
  EXPECT_TRUE(AllClose(mean(y, {-1}), zeros({4, 2}), 1e-6, 0));
}

}  // namespace
}  // namespace lt
