// Pooling kernels against direct window loops: padding as -inf (max) or zeros (avg,
// count_include_pad), overlapping windows, non-square windows and strides. Inputs drawn from a
// few small integers make ties common, so "the first maximum in row-major window order" is tested.
// The 2x2/stride-2 max pool has a fast path of its own (vectorized for f32, one variant per
// instruction set); each variant this CPU runs is checked bit for bit against the window loops on
// inputs full of ties, signed zeros, infinities and NaNs with different payloads, on shapes with
// odd sizes and rows shorter and longer than one vector.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ir/type_rules.h"
#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/pool_rows.h"
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

/// Values that make the max-pool rules visible: ties among small integers, +0 and -0 (equal, but
/// which one wins shows in the bits), -inf, +inf, and two NaNs with different payloads (which NaN
/// wins shows in the bits too).
template <class T>
Tensor<T> special_tensor(const Shape& s, std::mt19937& rng) {
  const T inf = std::numeric_limits<T>::infinity();
  const T nan_a = std::numeric_limits<T>::quiet_NaN(), nan_b = -nan_a;  // sign bit differs
  const std::array<T, 12> values = {-2, -1, 1, 2, 2, T(0), T(-0.0), T(-0.0), -inf, inf, nan_a, nan_b};
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::bernoulli_distribution rare(0.2);  // keep most windows free of NaN and infinities
  Tensor<T> t{{dtype_of<T>, s}, std::vector<T>(numel(s))};
  for (T& x : t.data) x = values[rare(rng) ? pick(rng) : pick(rng) % 8];
  return t;
}

/// The kernels' rule: the first NaN of the window, else its first maximum (row-major order).
template <class T>
int64_t reference_argmax(const std::vector<T>& x, const std::vector<int64_t>& taps) {
  int64_t best = -1;
  for (int64_t t : taps) {
    if (t < 0) continue;
    const bool better = best < 0 || (!std::isnan(x[best]) && (std::isnan(x[t]) || x[t] > x[best]));
    if (better) best = t;
  }
  return best;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Max pool forward and backward against the window loops. The tiling fast path (2x2, stride 2)
/// must match bit for bit, NaN payloads and signed zeros included; the general path's forward
/// keeps the last NaN of a window rather than the first, so there any NaN matches a NaN.
template <class T>
void check_max_special(const Shape& xs, const ir::PoolAttrs& a, std::mt19937& rng) {
  const bool tiling = a.kernel == ir::Ints{2, 2} && a.stride == ir::Ints{2, 2} &&
                      a.padding == ir::Ints{0, 0};
  Tensor<T> x = special_tensor<T>(xs, rng);
  Tensor<T> y = run<T>(ir::Op::MaxPool2d, a, {&x});
  Tensor<T> g = random_tensor<T>(y.type.shape, rng, false);
  Tensor<T> gx = run<T>(ir::Op::MaxPool2dGrad, a, {&x, &g});
  std::vector<T> ry(y.data.size()), rgx(x.data.size(), T(0));
  for_each_window(xs, y.type.shape, a, [&](int64_t yi, const std::vector<int64_t>& taps) {
    const int64_t best = reference_argmax(x.data, taps);
    ry[yi] = x.data[best];
    rgx[best] += g.data[yi];
  });
  for (size_t i = 0; i < ry.size(); ++i) {
    const bool ok = same_bits(y.data[i], ry[i]) ||
                    (!tiling && std::isnan(y.data[i]) && std::isnan(ry[i]));
    ASSERT_TRUE(ok) << shape_str(xs) << " y[" << i << "] = " << y.data[i] << ", want " << ry[i];
  }
  for (size_t i = 0; i < rgx.size(); ++i) {
    if (tiling) ASSERT_TRUE(same_bits(gx.data[i], rgx[i])) << shape_str(xs) << " gx[" << i << "]";
    else ASSERT_NEAR(gx.data[i], rgx[i], 1e-6) << shape_str(xs) << " gx[" << i << "]";
  }
}

// 2x2/stride 2 on odd heights and widths (a trailing row or column in no window), rows of 1 to 8,
// 13, 14, 16, 17 and 33 windows (one vector is 8 or 16 f32 windows, so every partial last step),
// an empty batch, and enough planes to split over threads; the last cases take the general path.
const std::vector<std::pair<Shape, ir::PoolAttrs>> kSpecialCases = {
    {{2, 3, 8, 8}, pool({2, 2}, {2, 2}, {0, 0})},
    {{2, 3, 7, 9}, pool({2, 2}, {2, 2}, {0, 0})},
    {{3, 1, 5, 2}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 2, 3}, pool({2, 2}, {2, 2}, {0, 0})},
    {{2, 2, 4, 5}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 3, 6, 6}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 5, 10}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 4, 13}, pool({2, 2}, {2, 2}, {0, 0})},
    {{2, 2, 6, 14}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 1, 4, 26}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 4, 17}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 1, 6, 32}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 3, 35}, pool({2, 2}, {2, 2}, {0, 0})},
    {{1, 2, 5, 67}, pool({2, 2}, {2, 2}, {0, 0})},
    {{0, 3, 4, 4}, pool({2, 2}, {2, 2}, {0, 0})},
    {{8, 16, 28, 28}, pool({2, 2}, {2, 2}, {0, 0})},
    {{2, 3, 7, 9}, pool({2, 2}, {1, 1}, {0, 0})},   // overlapping 2x2: general path
    {{2, 3, 8, 8}, pool({2, 2}, {2, 2}, {1, 1})},   // padded 2x2: general path
    {{2, 3, 9, 9}, pool({3, 3}, {2, 2}, {1, 1})}};

/// Runs f once with each f32 row variant of the 2x2 max pool this CPU has, then restores the best.
template <class F>
void for_each_row_variant(F&& f) {
  const std::string best = rt::max_pool_rows().isa;
  for (const rt::MaxPoolRows& r : rt::max_pool_rows_variants()) {
    SCOPED_TRACE(r.isa);
    rt::use_max_pool_rows(r.isa);
    ASSERT_STREQ(rt::max_pool_rows().isa, r.isa);
    f();
  }
  rt::use_max_pool_rows(best);
}

TEST(PoolKernel, MaxPoolTieAndNaNRulesOnFastAndGeneralPaths) {
  for_each_row_variant([] {
    std::mt19937 rng(3);
    for (int threads : {1, 2}) {
      rt::set_num_threads(threads);
      for (const auto& [xs, a] : kSpecialCases) {
        check_max_special<float>(xs, a, rng);
        check_max_special<double>(xs, a, rng);
      }
    }
    rt::set_num_threads(1);
  });
}

TEST(PoolKernel, RowVariantsAreTheCpusAndTheBestIsTheDefault) {
  const auto variants = rt::max_pool_rows_variants();
  ASSERT_FALSE(variants.empty());
  EXPECT_STREQ(variants.front().isa, "portable");
  EXPECT_STREQ(rt::max_pool_rows().isa, variants.back().isa);
  EXPECT_EQ(variants.size() > 1, __builtin_cpu_supports("avx2") != 0);
  std::string have;
  for (const rt::MaxPoolRows& r : variants) have += (have.empty() ? "" : ", ") + std::string(r.isa);
  try {
    rt::use_max_pool_rows("sse9");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "max pool rows: this CPU does not run 'sse9' (it runs " + have + ")");
  }
  EXPECT_STREQ(rt::max_pool_rows().isa, variants.back().isa);
}

TEST(PoolKernel, MaxPool2x2TiesGoToTheFirstTapAndTheFirstNaNWins) {
  for_each_row_variant([] {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    // Five windows in one row pair: a 4-way tie, a tie of -0 and +0 (-0 comes first), a NaN after
    // a larger number, -NaN before +NaN, and all -inf.
    Tensor<float> x{{DType::F32, {1, 1, 2, 10}},
                    {3, 3, -0.0f, 0.0f, 5, 1, -nan, 9, -inf, -inf,
                     3, 3, 0.0f, -0.0f, nan, 2, nan, 1, -inf, -inf}};
    Tensor<float> y = run<float>(ir::Op::MaxPool2d, pool({2, 2}, {2, 2}, {0, 0}), {&x});
    ASSERT_EQ(y.data.size(), 5u);
    EXPECT_EQ(y.data[0], 3);
    EXPECT_TRUE(std::signbit(y.data[1]) && y.data[1] == 0);
    EXPECT_TRUE(std::isnan(y.data[2]) && !std::signbit(y.data[2]));
    EXPECT_TRUE(std::isnan(y.data[3]) && std::signbit(y.data[3]));
    EXPECT_EQ(y.data[4], -inf);
    Tensor<float> g{{DType::F32, {1, 1, 1, 5}}, {1, 2, 3, 4, 5}};
    Tensor<float> gx = run<float>(ir::Op::MaxPool2dGrad, pool({2, 2}, {2, 2}, {0, 0}), {&x, &g});
    EXPECT_EQ(gx.data, (std::vector<float>{1, 0, 2, 0, 0, 0, 4, 0, 5, 0,  //
                                           0, 0, 0, 0, 3, 0, 0, 0, 0, 0}));
  });
}

/// [N, C, H, W] <-> [N, H, W, C].
template <class T>
Tensor<T> to_channels_last(const Tensor<T>& t, bool back = false) {
  const Shape& s = t.type.shape;  // the NCHW shape, or NHWC when going back
  const int64_t n = s[0], c = back ? s[3] : s[1], h = back ? s[1] : s[2], w = back ? s[2] : s[3];
  Tensor<T> out{{t.type.dtype, back ? Shape{n, c, h, w} : Shape{n, h, w, c}}, t.data};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t nchw = ((i * c + k) * h + y) * w + x, nhwc = ((i * h + y) * w + x) * c + k;
          out.data[back ? nchw : nhwc] = t.data[back ? nhwc : nchw];
        }
  return out;
}

/// Channels-last max pooling (what the layout pass gives a convolution's channels-last output)
/// against NCHW, on inputs full of ties, signed zeros, infinities and NaN payloads and output
/// gradients with signed zeros and infinities: the same bits, forward and backward, but for a
/// window's NaN outside the 2x2 tiling, where the NCHW forward keeps the last NaN and
/// channels-last the first.
template <class T>
void check_channels_last(const Shape& xs, ir::PoolAttrs a, std::mt19937& rng) {
  const bool tiling = a.kernel == ir::Ints{2, 2} && a.stride == ir::Ints{2, 2} &&
                      a.padding == ir::Ints{0, 0};
  Tensor<T> x = special_tensor<T>(xs, rng);
  Tensor<T> y = run<T>(ir::Op::MaxPool2d, a, {&x});
  Tensor<T> g = random_tensor<T>(y.type.shape, rng, false);
  for (size_t i = 0; i < g.data.size(); i += 3) g.data[i] = T(-0.0);
  for (size_t i = 1; i < g.data.size(); i += 7) g.data[i] = std::numeric_limits<T>::infinity();
  Tensor<T> gx = run<T>(ir::Op::MaxPool2dGrad, a, {&x, &g});
  Tensor<T> x_cl = to_channels_last(x), g_cl = to_channels_last(g);
  a.channels_last = true;
  Tensor<T> y_cl = to_channels_last(run<T>(ir::Op::MaxPool2d, a, {&x_cl}), true);
  Tensor<T> gx_cl = to_channels_last(run<T>(ir::Op::MaxPool2dGrad, a, {&x_cl, &g_cl}), true);
  ASSERT_EQ(y_cl.type.shape, y.type.shape);
  for (size_t i = 0; i < y.data.size(); ++i) {
    const bool ok = same_bits(y_cl.data[i], y.data[i]) ||
                    (!tiling && std::isnan(y_cl.data[i]) && std::isnan(y.data[i]));
    ASSERT_TRUE(ok) << shape_str(xs) << " y[" << i << "] = " << y_cl.data[i] << ", want "
                    << y.data[i];
  }
  for (size_t i = 0; i < gx.data.size(); ++i)
    ASSERT_TRUE(same_bits(gx_cl.data[i], gx.data[i]))
        << shape_str(xs) << " gx[" << i << "] = " << gx_cl.data[i] << ", want " << gx.data[i];
}

TEST(PoolKernel, MaxPoolChannelsLastGivesTheBitsOfNchw) {
  std::mt19937 rng(5);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const auto& cases : {kCases, kSpecialCases})
      for (const auto& [xs, a] : cases) {
        check_channels_last<float>(xs, a, rng);
        check_channels_last<double>(xs, a, rng);
      }
  }
  rt::set_num_threads(1);
}

TEST(PoolKernel, ChannelsLastShapesAndOnlyForMaxPooling) {
  ir::PoolAttrs a = pool({3, 3}, {2, 2}, {1, 1});
  a.channels_last = true;
  const std::vector<TensorType> x{{DType::F32, {2, 7, 9, 5}}};
  EXPECT_EQ(ir::infer_types(ir::Op::MaxPool2d, x, a).at(0).shape, (Shape{2, 4, 5, 5}));
  const std::vector<TensorType> x_gy{x[0], {DType::F32, {2, 4, 5, 5}}};
  EXPECT_EQ(ir::infer_types(ir::Op::MaxPool2dGrad, x_gy, a).at(0).shape, x[0].shape);
  try {
    ir::infer_types(ir::Op::AvgPool2d, x, a);
    FAIL() << "no error";
  } catch (const TypeError& e) {
    EXPECT_EQ(std::string(e.what()), "channels_last is for max pooling");
  }
}

/// through_relu against the where it stands for: where(a > 0, max_pool2d_grad(x, g), +0) with x
/// = a (ties, signed zeros, infinities, NaNs) and with x = relu(a), bit for bit, in both layouts.
template <class T>
void check_through_relu(const Shape& xs, ir::PoolAttrs a, bool channels_last, std::mt19937& rng) {
  Tensor<T> in = special_tensor<T>(xs, rng);
  for (bool relu : {false, true}) {
    Tensor<T> x = in;
    if (relu)
      for (T& v : x.data) v = v > T(0) ? v : T(0);  // relu(NaN) = 0, as the op's
    if (channels_last) x = to_channels_last(x);
    const Tensor<T>& mask = channels_last ? to_channels_last(in) : in;
    a.channels_last = channels_last;
    a.through_relu = false;
    const Shape ys = run<T>(ir::Op::MaxPool2d, a, {&x}).type.shape;
    Tensor<T> g = random_tensor<T>(ys, rng, false);
    for (size_t i = 0; i < g.data.size(); i += 5) g.data[i] = T(-0.0);
    Tensor<T> want = run<T>(ir::Op::MaxPool2dGrad, a, {&x, &g});
    for (size_t i = 0; i < want.data.size(); ++i)
      if (!(mask.data[i] > T(0))) want.data[i] = T(0);
    a.through_relu = true;
    Tensor<T> got = run<T>(ir::Op::MaxPool2dGrad, a, {&x, &g});
    for (size_t i = 0; i < got.data.size(); ++i)
      ASSERT_TRUE(same_bits(got.data[i], want.data[i]))
          << shape_str(xs) << (relu ? " of relu" : "") << (channels_last ? " NHWC" : " NCHW")
          << " gx[" << i << "] = " << got.data[i] << ", want " << want.data[i];
  }
}

TEST(PoolKernel, MaxPoolGradThroughReluIsTheMaskedGradient) {
  for_each_row_variant([] {
    std::mt19937 rng(7);
    for (int threads : {1, 2}) {
      rt::set_num_threads(threads);
      for (const auto& cases : {kCases, kSpecialCases})
        for (const auto& [xs, a] : cases)
          for (bool channels_last : {false, true}) {
            check_through_relu<float>(xs, a, channels_last, rng);
            check_through_relu<double>(xs, a, channels_last, rng);
          }
    }
    rt::set_num_threads(1);
  });
  ir::PoolAttrs a = pool({2, 2}, {2, 2}, {0, 0});
  a.through_relu = true;
  const std::vector<TensorType> x{{DType::F32, {1, 1, 4, 4}}};
  for (ir::Op op : {ir::Op::MaxPool2d, ir::Op::AvgPool2d}) {
    try {
      ir::infer_types(op, x, a);
      FAIL() << "no error";
    } catch (const TypeError& e) {
      EXPECT_EQ(std::string(e.what()), "through_relu is for max_pool2d_grad");
    }
  }
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
