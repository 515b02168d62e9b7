// Pooling kernels against direct window loops: padding as -inf (max) or zeros (avg,
// count_include_pad), overlapping windows, non-square windows and strides. Inputs drawn from a
// few small integers make ties common, so "the first maximum in row-major window order" is tested.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ir/type_rules.h"
#include "runtime/kernels/kernel.h"
#include "tests/unit/runtime/host_tensor.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

template <class T>
using Tensor = testing::HostTensor<T>;
using testing::dtype_of;

// Integers in [-3, 2]: all-negative windows check that padding never wins, and ties are common.
template <class T>
Tensor<T> random_tensor(const Shape& s, std::mt19937& rng, bool ties) {
  std::uniform_int_distribution<int> small(-3, 2);
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor<T> t{{dtype_of<T>, s}, std::vector<T>(numel(s))};
  for (T& x : t.data) x = ties ? static_cast<T>(small(rng)) : static_cast<T>(u(rng));
  return t;
}

template <class T>
Tensor<T> run(ir::Op op, const ir::PoolAttrs& a, std::vector<Tensor<T>*> in) {
  std::vector<TensorType> types;
  std::vector<rt::TensorRef> refs;
  for (Tensor<T>* t : in) types.push_back(t->type);
  for (Tensor<T>* t : in) refs.push_back(t->ref());
  Tensor<T> y{ir::infer_types(op, types, a).at(0), {}};
  y.data.assign(y.type.numel(), std::numeric_limits<T>::quiet_NaN());  // must be overwritten
  rt::TensorRef out = y.ref();
  rt::run_library(*ir::as_library(op), a, refs, std::span(&out, 1));
  return y;
}

/// Calls f(y_index, taps) for each output; taps lists the input indices of its window in
/// row-major window order, -1 for a padded tap.
template <class F>
void for_each_window(const Shape& xs, const Shape& ys, const ir::PoolAttrs& a, F f) {
  for (int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (int64_t oy = 0; oy < ys[2]; ++oy)
      for (int64_t ox = 0; ox < ys[3]; ++ox) {
        std::vector<int64_t> taps;
        for (int64_t i = 0; i < a.kernel[0]; ++i)
          for (int64_t j = 0; j < a.kernel[1]; ++j) {
            const int64_t ih = oy * a.stride[0] - a.padding[0] + i;
            const int64_t iw = ox * a.stride[1] - a.padding[1] + j;
            const bool in = ih >= 0 && ih < xs[2] && iw >= 0 && iw < xs[3];
            taps.push_back(in ? (p * xs[2] + ih) * xs[3] + iw : -1);
          }
        f((p * ys[2] + oy) * ys[3] + ox, taps);
      }
}

ir::PoolAttrs pool(ir::Ints k, ir::Ints s, ir::Ints p) {
  ir::PoolAttrs a;
  a.kernel = k;
  a.stride = s;
  a.padding = p;
  return a;
}

const std::vector<std::pair<Shape, ir::PoolAttrs>> kCases = {
    {{2, 3, 8, 8}, pool({2, 2}, {2, 2}, {0, 0})},
    {{2, 3, 7, 9}, pool({3, 3}, {2, 2}, {1, 1})},   // overlapping, padded, odd sizes
    {{1, 2, 5, 5}, pool({3, 3}, {1, 1}, {1, 1})},   // every pixel in up to 9 windows
    {{3, 2, 9, 6}, pool({3, 2}, {2, 1}, {1, 0})},   // non-square window and stride
    {{1, 1, 4, 4}, pool({4, 4}, {1, 1}, {2, 2})},
    {{8, 16, 33, 31}, pool({3, 3}, {2, 2}, {1, 1})}};  // enough planes to split

template <class T>
void check_max(const Shape& xs, const ir::PoolAttrs& a, std::mt19937& rng) {
  Tensor<T> x = random_tensor<T>(xs, rng, true);
  Tensor<T> y = run<T>(ir::Op::MaxPool2d, a, {&x});
  Tensor<T> g = random_tensor<T>(y.type.shape, rng, false);
  Tensor<T> gx = run<T>(ir::Op::MaxPool2dGrad, a, {&x, &g});
  std::vector<T> ry(y.data.size()), rgx(x.data.size(), T(0));
  for_each_window(xs, y.type.shape, a, [&](int64_t yi, const std::vector<int64_t>& taps) {
    int64_t best = -1;
    for (int64_t t : taps)
      if (t >= 0 && (best < 0 || x.data[t] > x.data[best])) best = t;
    ry[yi] = x.data[best];
    rgx[best] += g.data[yi];
  });
  EXPECT_EQ(y.data, ry) << shape_str(xs);
  for (size_t i = 0; i < rgx.size(); ++i) ASSERT_NEAR(gx.data[i], rgx[i], 1e-6) << shape_str(xs);
}

template <class T>
void check_avg(const Shape& xs, ir::PoolAttrs a, std::mt19937& rng) {
  Tensor<T> x = random_tensor<T>(xs, rng, false);
  Tensor<T> y = run<T>(ir::Op::AvgPool2d, a, {&x});
  Tensor<T> g = random_tensor<T>(y.type.shape, rng, false);
  a.grad_shape = xs;
  Tensor<T> gx = run<T>(ir::Op::AvgPool2dGrad, a, {&g});
  std::vector<double> ry(y.data.size()), rgx(x.data.size());
  const double area = double(a.kernel[0] * a.kernel[1]);
  for_each_window(xs, y.type.shape, a, [&](int64_t yi, const std::vector<int64_t>& taps) {
    for (int64_t t : taps)
      if (t >= 0) {
        ry[yi] += x.data[t] / area;
        rgx[t] += g.data[yi] / area;
      }
  });
  const double tol = std::is_same_v<T, double> ? 1e-13 : 1e-5;
  for (size_t i = 0; i < ry.size(); ++i) ASSERT_NEAR(y.data[i], ry[i], tol) << shape_str(xs);
  for (size_t i = 0; i < rgx.size(); ++i) ASSERT_NEAR(gx.data[i], rgx[i], tol) << shape_str(xs);
}

TEST(PoolKernel, MaxPoolTakesFirstMaximumAndIgnoresPadding) {
  std::mt19937 rng(1);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const auto& [xs, a] : kCases) {
      check_max<float>(xs, a, rng);
      check_max<double>(xs, a, rng);
    }
  }
  rt::set_num_threads(1);
}

TEST(PoolKernel, MaxPoolOfNegativeInputNeverReturnsPadding) {
  Tensor<float> x{{DType::F32, {1, 1, 2, 2}}, {-5, -4, -3, -2}};
  Tensor<float> y = run<float>(ir::Op::MaxPool2d, pool({2, 2}, {1, 1}, {1, 1}), {&x});
  EXPECT_EQ(y.data, (std::vector<float>{-5, -4, -4, -3, -2, -2, -3, -2, -2}));
}

TEST(PoolKernel, MaxPoolPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor<float> x{{DType::F32, {1, 1, 2, 2}}, {1, nan, 3, 2}};
  Tensor<float> y = run<float>(ir::Op::MaxPool2d, pool({2, 2}, {2, 2}, {0, 0}), {&x});
  EXPECT_TRUE(std::isnan(y.data[0]));
}

TEST(PoolKernel, AvgPoolCountsPaddingAsZeros) {
  std::mt19937 rng(2);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const auto& [xs, a] : kCases) {
      check_avg<float>(xs, a, rng);
      check_avg<double>(xs, a, rng);
    }
  }
  rt::set_num_threads(1);
}

}  // namespace
}  // namespace lt
