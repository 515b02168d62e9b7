// Autocast (lt/autocast.h): which ops run in bf16 (the table), what they compute, their
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
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;  // NaN bits too
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

// Every op's compute dtype under bf16, from its samples at f32: an op on the lower-precision
// list gives exactly its result on bf16 copies of the operands, cast back to f32; any other op
// exactly its f32 result.
TEST(Autocast, EveryOpComputesInItsTablesDtype) {
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
            low.push_back(x.dtype() == DType::F32 ? cast(x, DType::BF16) : x);
          for (const Tensor& y : apply(op, low, s.attrs, Loc::current()))
            want.push_back(y.dtype() == DType::BF16 ? cast(y, DType::F32) : y);
        } else {
          want = apply(op, s.inputs, s.attrs, Loc::current());
        }
      }
      AutocastGuard autocast(DType::BF16);
      NoGradGuard no_grad;
      const std::vector<Tensor> got = apply(op, s.inputs, s.attrs, Loc::current());
      ASSERT_EQ(got.size(), want.size()) << s.label();
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_TRUE(same_bits(got[i], want[i])) << s.label() << " output " << i;
      ++checked;
    }
  }
  EXPECT_EQ(lower, 1);  // matmul; conv2d stays f32 until its kernels take bf16
  EXPECT_GT(checked, 50);
  EXPECT_EQ(amp::autocast_policy(ir::Op::MatMul), AutocastPolicy::LowerPrecision);
  EXPECT_EQ(amp::autocast_policy(ir::Op::Softmax), AutocastPolicy::F32);
}

// The MLP's first layer: within bf16's rounding of the operands (8 significant bits each, the
// sum in f32) of the float64 product, and not equal to the f32 result (it did run in bf16).
TEST(Autocast, MatmulIsTheBf16ProductAccumulatedInF32) {
  manual_seed(3);
  const Tensor x = randn({128, 784}), w = randn({128, 784}) * 0.05;
  Tensor y;
  {
    AutocastGuard autocast;
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
  EXPECT_LT(worst, 3 * std::ldexp(1.0, -8));  // two operand roundings and the bf16 result
  EXPECT_GT(differ, 128 * 128 / 2);
}

// Gradients flow through the casts: a layer's weight and input gradients under autocast are the
// f32 ones within bf16's precision, f32 tensors, and the same in eager and lazy mode, bit for bit.
TEST(Autocast, GradientsThroughTheCastsMatchF32AndLazyMatchesEager) {
  auto run = [](Mode mode, bool autocast_on) {
    manual_seed(5);
    Tensor x = randn({32, 64}), w = (randn({16, 64}) * 0.1).requires_grad_();
    Tensor gx = x.detach().requires_grad_();
    std::vector<Tensor> out;
    {
      ModeGuard guard(mode);
      AutocastGuard autocast(DType::BF16, autocast_on);
      const Tensor loss = sum(relu(linear(gx, w)) * linear(gx, w));
      loss.backward();
      out = {loss.detach(), w.grad(), gx.grad()};
      if (mode == Mode::Lazy) mark_step();
    }
    return out;
  };
  const std::vector<Tensor> f32 = run(Mode::Eager, false);
  const std::vector<Tensor> eager = run(Mode::Eager, true);
  const std::vector<Tensor> lazy = run(Mode::Lazy, true);
  for (size_t i = 0; i < f32.size(); ++i) {
    EXPECT_EQ(eager[i].dtype(), DType::F32);
    const std::vector<float> a = eager[i].to_vector<float>(), b = f32[i].to_vector<float>();
    double err = 0, norm = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      err = std::max(err, double(std::abs(a[k] - b[k])));
      norm = std::max(norm, double(std::abs(b[k])));
    }
    EXPECT_LT(err, 0.03 * norm) << "tensor " << i;
    EXPECT_GT(err, 0) << "tensor " << i << " (autocast changed nothing)";
    EXPECT_TRUE(same_bits(lazy[i], eager[i])) << "tensor " << i;
  }
}

TEST(Autocast, OnlyBf16) {
  EXPECT_THAT(testing::error_of([] { AutocastGuard g(DType::F16); }),
              ::testing::StartsWith("autocast to f16: only bf16 is supported (f16 needs f16 "
                                    "GEMM kernels, not there yet) at "));
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
