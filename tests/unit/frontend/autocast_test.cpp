// Autocast (lt/autocast.h): which ops run in bf16 or f16 (the table), what they compute, their
// gradients through the casts, and eager against lazy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "frontend/amp/autocast.h"
#include "frontend/dispatch.h"
#include "lt/autocast.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"
#include "tests/support/op_samples.h"

namespace lt {
namespace {

using amp::AutocastPolicy;

template <class T>
bool same_bytes(const Tensor& a, const Tensor& b) {
  const std::vector<T> x = a.to_vector<T>(), y = b.to_vector<T>();
  // NaN bits too. An empty tensor's vectors may hold null, which memcmp must not be given.
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type()) return false;
  switch (a.dtype()) {
    case DType::F32: return same_bytes<float>(a, b);
    case DType::F64: return same_bytes<double>(a, b);
    case DType::I64: return same_bytes<int64_t>(a, b);
    case DType::I32: return same_bytes<int32_t>(a, b);
    case DType::Bool: return same_bytes<int32_t>(cast(a, DType::I32), cast(b, DType::I32));
    case DType::F16: case DType::BF16: break;
  }
  return same_bytes<float>(cast(a, DType::F32), cast(b, DType::F32));
}

// Every op's compute dtype under bf16 and under f16, from its samples at f32: an op on the
// lower-precision list gives exactly its result on bf16 (f16) copies of the operands, cast back
// to f32; any other op exactly its f32 result.
class AutocastTable : public ::testing::TestWithParam<DType> {};

TEST_P(AutocastTable, EveryOpComputesInItsTablesDtype) {
  const DType low_dtype = GetParam();
  int lower = 0, checked = 0;
  for (ir::Op op : ir::all_ops()) {
    const AutocastPolicy policy = amp::autocast_policy(op);
    lower += policy == AutocastPolicy::LowerPrecision;
    for (const testing::OpSample& s64 : testing::samples_for(op)) {
      if (!testing::takes_floats(s64)) continue;
      const testing::OpSample s = testing::at_dtype(s64, DType::F32);
      std::vector<Tensor> want;
      {
        NoGradGuard no_grad;
        if (policy == AutocastPolicy::LowerPrecision) {
          std::vector<Tensor> low;
          for (const Tensor& x : s.inputs)
            low.push_back(x.dtype() == DType::F32 ? cast(x, low_dtype) : x);
          for (const Tensor& y : apply(op, low, s.attrs, Loc::current()))
            want.push_back(y.dtype() == low_dtype ? cast(y, DType::F32) : y);
        } else {
          want = apply(op, s.inputs, s.attrs, Loc::current());
        }
      }
      AutocastGuard autocast(low_dtype);
      NoGradGuard no_grad;
      const std::vector<Tensor> got = apply(op, s.inputs, s.attrs, Loc::current());
      ASSERT_EQ(got.size(), want.size()) << s.label();
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], want[i])) << s.label() << " output " << i;
      ++checked;
    }
  }
  EXPECT_EQ(lower, 2);  // matmul and conv2d
  EXPECT_GT(checked, 50);
  EXPECT_EQ(amp::autocast_policy(ir::Op::MatMul), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(amp::autocast_policy(ir::Op::Conv2d), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(amp::autocast_policy(ir::Op::Conv2dWeightGrad), AutocastPolicy::F32);  // on bf16 data
  EXPECT_EQ(amp::autocast_policy(ir::Op::Softmax), AutocastPolicy::F32);
  EXPECT_EQ(amp::autocast_policy(ir::Op::BatchNorm), AutocastPolicy::F32);
}

INSTANTIATE_TEST_SUITE_P(LowDtypes, AutocastTable, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// The unit roundoff of the lower precision: 2^-8 for bf16 (8 significant bits), 2^-11 for f16.
double unit(DType t) { return std::ldexp(1.0, t == DType::F16 ? -11 : -8); }

class AutocastDtype : public ::testing::TestWithParam<DType> {};

// The MLP's first layer: within the rounding of the operands (each to the lower precision, the
// sum in f32) of the float64 product, and not equal to the f32 result (it did run lower).
TEST_P(AutocastDtype, MatmulIsTheLowPrecisionProductAccumulatedInF32) {
  const DType low = GetParam();
  manual_seed(3);
  const Tensor x = randn({128, 784}), w = randn({128, 784}) * 0.05;
  Tensor y;
  {
    AutocastGuard autocast(low);
    y = linear(x, w);
  }
  EXPECT_EQ(y.dtype(), DType::F32);
  const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  const std::vector<float> yv = y.to_vector<float>(), f32 = linear(x, w).to_vector<float>();
  double worst = 0;
  int differ = 0;
  for (int i = 0; i < 128; ++i)
    for (int j = 0; j < 128; ++j) {
      double exact = 0, scale = 0;
      for (int k = 0; k < 784; ++k) {
        exact += double(xv[i * 784 + k]) * double(wv[j * 784 + k]);
        scale += std::abs(double(xv[i * 784 + k]) * double(wv[j * 784 + k]));
      }
      worst = std::max(worst, std::abs(yv[i * 128 + j] - exact) / scale);
      differ += yv[i * 128 + j] != f32[i * 128 + j];
    }
  EXPECT_LT(worst, 3 * unit(low));  // two operand roundings and the low-precision result
  EXPECT_GT(worst, unit(low) / 64);
  EXPECT_GT(differ, 128 * 128 / 2);
}

// The CNN's second convolution (32 -> 64 channels, 3x3, padding 1) on a batch of 2: each output
// within the operands' and the result's rounding of the float64 convolution, f32 out.
TEST_P(AutocastDtype, Conv2dIsTheLowPrecisionConvolutionAccumulatedInF32) {
  const DType low = GetParam();
  manual_seed(4);
  const int64_t n = 2, c = 32, o = 64, h = 14, k = 3;
  const Tensor x = randn({n, c, h, h}), w = randn({o, c, k, k}) * 0.06;
  Tensor y;
  {
    AutocastGuard autocast(low);
    y = conv2d(x, w, Tensor(), {.padding = {1, 1}});
  }
  ASSERT_EQ(y.dtype(), DType::F32);
  ASSERT_EQ(y.shape(), (Shape{n, o, h, h}));
  const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>();
  const std::vector<float> yv = y.to_vector<float>();
  double worst = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t q = 0; q < o; ++q)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < h; ++j) {
          double exact = 0, scale = 0;
          for (int64_t p = 0; p < c; ++p)
            for (int64_t di = 0; di < k; ++di)
              for (int64_t dj = 0; dj < k; ++dj) {
                const int64_t ii = i + di - 1, jj = j + dj - 1;
                if (ii < 0 || ii >= h || jj < 0 || jj >= h) continue;
                const double t = double(xv[((b * c + p) * h + ii) * h + jj]) *
                                 double(wv[((q * c + p) * k + di) * k + dj]);
                exact += t;
                scale += std::abs(t);
              }
          worst = std::max(worst, std::abs(yv[((b * o + q) * h + i) * h + j] - exact) / scale);
        }
  EXPECT_LT(worst, 3 * unit(low));
  EXPECT_GT(worst, unit(low) / 64);  // it did run in the lower precision
}

// Gradients flow through the casts: the weight and input gradients of a linear layer and of a
// convolution under autocast are the f32 ones within the lower precision, f32 tensors, and the
// same in eager and lazy mode, bit for bit, where the lazy step keeps its GEMMs' roundings
// (LT_WIDE_GEMM_RESULTS=0). With the default, the lazy bf16 step's GEMMs write their f32
// accumulators instead: closer to f32 than eager over all five tensors; f16 keeps its bits.
TEST_P(AutocastDtype, GradientsThroughTheCastsMatchF32AndLazyMatchesEager) {
  const DType low = GetParam();
  auto run = [low](Mode mode, bool autocast_on) {
    manual_seed(5);
    Tensor x = randn({32, 64}), w = (randn({16, 64}) * 0.1).requires_grad_();
    Tensor img = randn({2, 3, 8, 8}), cw = (randn({4, 3, 3, 3}) * 0.2).requires_grad_();
    Tensor gx = x.detach().requires_grad_(), gimg = img.detach().requires_grad_();
    std::vector<Tensor> out;
    {
      ModeGuard guard(mode);
      AutocastGuard autocast(low, autocast_on);
      const Tensor conv = conv2d(gimg, cw, Tensor(), {.padding = {1, 1}});
      const Tensor loss = sum(relu(linear(gx, w)) * linear(gx, w)) + sum(conv * conv);
      loss.backward();
      out = {loss.detach(), w.grad(), gx.grad(), cw.grad(), gimg.grad()};
      if (mode == Mode::Lazy) mark_step();
    }
    return out;
  };
  const std::vector<Tensor> f32 = run(Mode::Eager, false);
  const std::vector<Tensor> eager = run(Mode::Eager, true);
  const std::vector<Tensor> lazy = run(Mode::Lazy, true);
  const CompileOptions saved = compile_options();
  CompileOptions rounding = saved;
  rounding.wide_gemm_results = false;
  set_compile_options(rounding);
  const std::vector<Tensor> lazy_rounded = run(Mode::Lazy, true);
  set_compile_options(saved);
  ASSERT_TRUE(saved.wide_gemm_results);
  double eager_err = 0, lazy_err = 0;  // squared, relative to each tensor's size
  for (size_t i = 0; i < f32.size(); ++i) {
    const std::vector<float> a = eager[i].to_vector<float>(), b = f32[i].to_vector<float>();
    const std::vector<float> c = lazy[i].to_vector<float>();
    double norm = 0, e = 0, l = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      norm += double(b[k]) * b[k];
      e += (double(a[k]) - b[k]) * (double(a[k]) - b[k]);
      l += (double(c[k]) - b[k]) * (double(c[k]) - b[k]);
    }
    eager_err += e / norm;
    lazy_err += l / norm;
    EXPECT_TRUE(same_bits(lazy_rounded[i], eager[i])) << "tensor " << i;
    if (low == DType::F16) {
      EXPECT_TRUE(same_bits(lazy[i], eager[i])) << "tensor " << i;
    }
  }
  if (low == DType::BF16) {
    EXPECT_LT(lazy_err, eager_err);
  }
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_EQ(eager[i].dtype(), DType::F32);
    const std::vector<float> a = eager[i].to_vector<float>(), b = f32[i].to_vector<float>();
    double err = 0, norm = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      err = std::max(err, double(std::abs(a[k] - b[k])));
      norm = std::max(norm, double(std::abs(b[k])));
    }
    EXPECT_LT(err, 8 * unit(low) * norm) << "tensor " << i;
    EXPECT_GT(err, 0) << "tensor " << i << " (autocast changed nothing)";
  }
}

// A batch norm between two bf16 convolutions: its gradient's dx, which the convolution's cast
// narrows to bf16, comes from the batch norm kernel in bf16 in the compiled step
// (narrow_norm_gradients) and must keep eager's bits, cast and all (the lazy step keeping its
// GEMMs' roundings, LT_WIDE_GEMM_RESULTS=0; 4 channels keep NCHW, so the convolutions run on
// the same paths in both modes).
TEST(Autocast, BatchNormGradientBetweenBf16ConvolutionsKeepsEagerBits) {
  auto run = [](Mode mode) {
    manual_seed(7);
    Tensor img = randn({2, 3, 8, 8}).requires_grad_();
    Tensor w1 = (randn({4, 3, 3, 3}) * 0.2).requires_grad_();
    Tensor w2 = (randn({4, 4, 3, 3}) * 0.2).requires_grad_();
    Tensor gamma = ones({4}).requires_grad_(), beta = zeros({4}).requires_grad_();
    std::vector<Tensor> out;
    {
      ModeGuard guard(mode);
      AutocastGuard autocast(DType::BF16);
      const Tensor h = conv2d(img, w1, Tensor(), {.padding = {1, 1}});
      const Tensor y = relu(batch_norm(h, gamma, beta, Tensor(), Tensor(), true));
      const Tensor z = conv2d(y, w2, Tensor(), {.padding = {1, 1}});
      const Tensor loss = sum(z * z);
      loss.backward();
      out = {loss.detach(), img.grad(), w1.grad(), w2.grad(), gamma.grad(), beta.grad()};
      if (mode == Mode::Lazy) mark_step();
    }
    return out;
  };
  const CompileOptions saved = compile_options();
  CompileOptions rounding = saved;
  rounding.wide_gemm_results = false;
  set_compile_options(rounding);
  const std::vector<Tensor> lazy = run(Mode::Lazy);
  set_compile_options(saved);
  const std::vector<Tensor> eager = run(Mode::Eager);
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_TRUE(same_bits(lazy[i], eager[i])) << "tensor " << i;
}

INSTANTIATE_TEST_SUITE_P(LowDtypes, AutocastDtype, ::testing::Values(DType::BF16, DType::F16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(Autocast, LowerPrecisionIsBf16OrF16) {
  EXPECT_THAT(testing::error_of([] { AutocastGuard g(DType::F32); }),
              ::testing::StartsWith("autocast to f32: the lower precision is bf16 or f16, at "));
  EXPECT_THAT(testing::error_of([] { AutocastGuard g(DType::I32); }),
              ::testing::StartsWith("autocast to i32: the lower precision is bf16 or f16, at "));
  EXPECT_NO_THROW(AutocastGuard g(DType::F64, false));  // off: the dtype is not used
  EXPECT_FALSE(autocast_enabled());
  {
    AutocastGuard on;
    EXPECT_TRUE(autocast_enabled());
    {
      AutocastGuard off(DType::BF16, false);
      EXPECT_FALSE(autocast_enabled());
    }
    EXPECT_TRUE(autocast_enabled());
  }
  EXPECT_FALSE(autocast_enabled());
}

}  // namespace
}  // namespace lt
