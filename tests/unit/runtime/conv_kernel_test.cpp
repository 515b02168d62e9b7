// Conv2d and its gradients against direct 7-deep loops (the gradients as scatter loops, the
// obviously-correct adjoints), plus the adjoint identity <conv(x,w), g> = <x, dx(g,w)> =
// <w, dw(x,g)> in f64. Covers stride, padding, dilation, groups, 1x1 fast paths, non-square
// shapes, and 1 vs 2 threads, through the path each call selects (conv_paths.h). On the im2col
// path, stride-1 "same" convolutions (output width == input width) take a fast im2col/col2im of
// their own; they must equal, bit for bit, the general im2col path run on the input zero-padded
// by hand (padding 0, so the output width differs), which builds the same column matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <vector>

#include "ir/error.h"
#include "ir/type_rules.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/kernel.h"
#include "tests/unit/runtime/host_tensor.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

template <class T>
using Tensor = testing::HostTensor<T>;
using testing::dtype_of;

using testing::random_tensor;

template <class T>
Tensor<T> run(ir::LibraryOp op, ir::Op gop, const ir::ConvAttrs& a, Tensor<T>& p, Tensor<T>& q) {
  const std::vector<TensorType> types = {p.type, q.type};
  Tensor<T> y{ir::infer_types(gop, types, a).at(0), {}};
  y.data.assign(y.type.numel(), std::numeric_limits<T>::quiet_NaN());  // must be overwritten
  const rt::TensorRef in[] = {p.ref(), q.ref()}, out[] = {y.ref()};
  rt::run_library(op, a, in, out);
  return y;
}

/// run() on the im2col path.
template <class T>
Tensor<T> run_im2col(ir::LibraryOp op, ir::Op gop, const ir::ConvAttrs& a, Tensor<T>& p,
                     Tensor<T>& q) {
  const std::vector<TensorType> types = {p.type, q.type};
  Tensor<T> y{ir::infer_types(gop, types, a).at(0), {}};
  y.data.assign(y.type.numel(), std::numeric_limits<T>::quiet_NaN());
  const rt::TensorRef in[] = {p.ref(), q.ref()}, out[] = {y.ref()};
  if (op == ir::LibraryOp::Conv2d) rt::conv2d_im2col(a, in, out, nullptr);
  else if (op == ir::LibraryOp::Conv2dInputGrad) rt::conv2d_input_grad_im2col(a, in, out);
  else rt::conv2d_weight_grad_im2col(a, in, out);
  return y;
}

struct Case {
  Shape x, w;
  ir::ConvAttrs attrs;
};

/// Calls f(x_index, w_index, y_index) for every multiply-add of the convolution.
template <class F>
void for_each_tap(const Shape& xs, const Shape& ws, const Shape& ys, const ir::ConvAttrs& a, F f) {
  const int64_t og = ws[0] / a.groups, cg = ws[1];
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t o = 0; o < ws[0]; ++o)
      for (int64_t oy = 0; oy < ys[2]; ++oy)
        for (int64_t ox = 0; ox < ys[3]; ++ox)
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < ws[2]; ++i)
              for (int64_t j = 0; j < ws[3]; ++j) {
                const int64_t ih = oy * a.stride[0] - a.padding[0] + i * a.dilation[0];
                const int64_t iw = ox * a.stride[1] - a.padding[1] + j * a.dilation[1];
                if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
                const int64_t xc = o / og * cg + c;
                f(((n * xs[1] + xc) * xs[2] + ih) * xs[3] + iw,
                  ((o * cg + c) * ws[2] + i) * ws[3] + j, ((n * ws[0] + o) * ys[2] + oy) * ys[3] + ox);
              }
}

template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, double tol,
                  const char* what, const Case& c) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol) << what << " x=" << shape_str(c.x) << " w=" << shape_str(c.w)
                                      << " groups=" << c.attrs.groups << " at " << i;
}

template <class T>
void check_case(Case c, std::mt19937& rng) {
  const double tol = std::is_same_v<T, double> ? 1e-12 : 1e-4;
  Tensor<T> x = random_tensor<T>(c.x, rng), w = random_tensor<T>(c.w, rng);
  Tensor<T> y = run(ir::LibraryOp::Conv2d, ir::Op::Conv2d, c.attrs, x, w);
  Tensor<T> g = random_tensor<T>(y.type.shape, rng);
  std::vector<double> ry(y.data.size()), rgx(x.data.size()), rgw(w.data.size());
  for_each_tap(c.x, c.w, y.type.shape, c.attrs, [&](int64_t xi, int64_t wi, int64_t yi) {
    ry[yi] += double(x.data[xi]) * w.data[wi];
    rgx[xi] += double(g.data[yi]) * w.data[wi];
    rgw[wi] += double(g.data[yi]) * x.data[xi];
  });
  expect_close(y.data, ry, tol, "conv2d", c);
  ir::ConvAttrs ga = c.attrs;
  ga.grad_shape = c.x;
  expect_close(run(ir::LibraryOp::Conv2dInputGrad, ir::Op::Conv2dInputGrad, ga, g, w).data, rgx,
               tol, "input grad", c);
  ga.grad_shape = c.w;
  Tensor<T> gw = run(ir::LibraryOp::Conv2dWeightGrad, ir::Op::Conv2dWeightGrad, ga, x, g);
  expect_close(gw.data, rgw, tol * c.x[0], "weight grad", c);
  // Same inputs, same thread count: the batch reduction adds in a fixed order.
  EXPECT_EQ(gw.data, run(ir::LibraryOp::Conv2dWeightGrad, ir::Op::Conv2dWeightGrad, ga, x, g).data);
}

ir::ConvAttrs conv(ir::Ints stride, ir::Ints pad, ir::Ints dil, int64_t groups) {
  ir::ConvAttrs a;
  a.stride = stride;
  a.padding = pad;
  a.dilation = dil;
  a.groups = groups;
  return a;
}

const std::vector<Case> kCases = {
    {{2, 3, 7, 7}, {4, 3, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 1)},
    {{2, 4, 9, 8}, {6, 2, 3, 3}, conv({2, 2}, {1, 1}, {1, 1}, 2)},       // groups, stride 2
    {{1, 2, 10, 11}, {3, 2, 3, 2}, conv({1, 1}, {2, 1}, {2, 2}, 1)},     // dilation, 3x2 kernel
    {{3, 4, 5, 6}, {8, 4, 1, 1}, conv({1, 1}, {0, 0}, {1, 1}, 1)},       // pointwise fast path
    {{2, 4, 6, 6}, {4, 1, 1, 1}, conv({2, 2}, {0, 0}, {1, 1}, 4)},       // 1x1 stride 2, depthwise
    {{5, 3, 13, 13}, {4, 3, 5, 5}, conv({2, 2}, {2, 2}, {1, 1}, 1)},
    {{1, 6, 8, 8}, {6, 1, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 6)},       // depthwise
    {{2, 2, 9, 7}, {3, 2, 2, 3}, conv({3, 2}, {1, 0}, {1, 2}, 1)},       // asymmetric everything
    {{1, 1, 4, 4}, {1, 1, 4, 4}, conv({1, 1}, {0, 0}, {1, 1}, 1)},       // kernel = input: 1x1 out
    {{4, 16, 16, 16}, {32, 8, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 2)}};  // splits over images

TEST(ConvKernel, F64MatchesDirectLoops) {
  std::mt19937 rng(1);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& c : kCases) check_case<double>(c, rng);
  }
  rt::set_num_threads(1);
}

TEST(ConvKernel, F32MatchesDirectLoops) {
  std::mt19937 rng(2);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& c : kCases) check_case<float>(c, rng);
  }
  rt::set_num_threads(1);
}

/// x with a border of zeros: ph rows above and below, pw columns left and right.
template <class T>
Tensor<T> zero_pad(const Tensor<T>& x, int64_t ph, int64_t pw) {
  const Shape& s = x.type.shape;
  const int64_t h = s[2] + 2 * ph, w = s[3] + 2 * pw;
  Tensor<T> p{{x.type.dtype, {s[0], s[1], h, w}}, std::vector<T>(s[0] * s[1] * h * w, T(0))};
  for (int64_t plane = 0; plane < s[0] * s[1]; ++plane)
    for (int64_t y = 0; y < s[2]; ++y)
      for (int64_t q = 0; q < s[3]; ++q)
        p.data[(plane * h + y + ph) * w + q + pw] = x.data[(plane * s[2] + y) * s[3] + q];
  return p;
}

/// Equal bits, or both NaN: which NaN a sum of two NaNs returns depends on the operand order the
/// compiler picked for a commutative add, which no kernel promises.
template <class T>
void expect_same_bits(const std::vector<T>& got, const std::vector<T>& want, const char* what,
                      const Case& c) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const bool same = std::memcmp(&got[i], &want[i], sizeof(T)) == 0 ||
                      (std::isnan(got[i]) && std::isnan(want[i]));
    ASSERT_TRUE(same) << what << " x=" << shape_str(c.x) << " w=" << shape_str(c.w) << " at " << i
                      << ": " << got[i] << " vs " << want[i];
  }
}

/// Uniform values with a few infinities, NaNs and signed zeros mixed in.
template <class T>
Tensor<T> tensor_with_specials(const Shape& s, std::mt19937& rng) {
  Tensor<T> t = random_tensor<T>(s, rng);
  const T specials[] = {std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(),
                        std::numeric_limits<T>::quiet_NaN(), T(-0.0), T(0)};
  std::uniform_int_distribution<size_t> at(0, t.data.size() - 1);
  for (T v : specials) t.data[at(rng)] = v;
  return t;
}

/// A "same" convolution (im2col fast path) against the general im2col path on the zero-padded
/// input.
template <class T>
void check_same_conv(const Case& c, std::mt19937& rng, bool specials) {
  const int64_t ph = c.attrs.padding[0], pw = c.attrs.padding[1];
  Tensor<T> x = specials ? tensor_with_specials<T>(c.x, rng) : random_tensor<T>(c.x, rng);
  Tensor<T> w = random_tensor<T>(c.w, rng);
  Tensor<T> xp = zero_pad(x, ph, pw);
  ir::ConvAttrs fast = c.attrs, general = c.attrs;
  general.padding = {0, 0};
  Tensor<T> y = run_im2col(ir::LibraryOp::Conv2d, ir::Op::Conv2d, fast, x, w);
  ASSERT_EQ(y.type.shape[3], c.x[3]) << "not a same convolution";
  expect_same_bits(y.data,
                   run_im2col(ir::LibraryOp::Conv2d, ir::Op::Conv2d, general, xp, w).data,
                   "conv2d", c);

  Tensor<T> g = specials ? tensor_with_specials<T>(y.type.shape, rng)
                         : random_tensor<T>(y.type.shape, rng);
  fast.grad_shape = c.x;
  general.grad_shape = xp.type.shape;
  const auto dx = ir::LibraryOp::Conv2dInputGrad;
  const auto dw = ir::LibraryOp::Conv2dWeightGrad;
  Tensor<T> gx = run_im2col(dx, ir::Op::Conv2dInputGrad, fast, g, w);
  Tensor<T> gxp = run_im2col(dx, ir::Op::Conv2dInputGrad, general, g, w);
  Tensor<T> gxp_inner = gx;  // gxp without its border: the gradient of the real input pixels
  for (int64_t plane = 0; plane < c.x[0] * c.x[1]; ++plane)
    for (int64_t r = 0; r < c.x[2]; ++r)
      for (int64_t q = 0; q < c.x[3]; ++q)
        gxp_inner.data[(plane * c.x[2] + r) * c.x[3] + q] =
            gxp.data[(plane * xp.type.shape[2] + r + ph) * xp.type.shape[3] + q + pw];
  expect_same_bits(gx.data, gxp_inner.data, "input grad", c);

  fast.grad_shape = general.grad_shape = c.w;
  expect_same_bits(run_im2col(dw, ir::Op::Conv2dWeightGrad, fast, x, g).data,
                   run_im2col(dw, ir::Op::Conv2dWeightGrad, general, xp, g).data,
                   "weight grad", c);
}

// Stride 1 and 2 * padding == dilation * (kernel - 1): 3x3 and 5x5, non-square kernels and
// paddings, dilation, groups, rows of one pixel, and kernels larger than the input (taps that
// read no pixel at all).
const std::vector<Case> kSameCases = {
    {{2, 3, 7, 7}, {4, 3, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 1)},
    {{3, 2, 5, 9}, {3, 2, 5, 5}, conv({1, 1}, {2, 2}, {1, 1}, 1)},
    {{2, 2, 6, 5}, {2, 2, 5, 3}, conv({1, 1}, {2, 1}, {1, 1}, 1)},
    {{1, 3, 4, 8}, {2, 3, 1, 3}, conv({1, 1}, {0, 1}, {1, 1}, 1)},
    {{2, 2, 9, 8}, {3, 2, 3, 3}, conv({1, 1}, {2, 2}, {2, 2}, 1)},
    {{2, 4, 6, 7}, {6, 2, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 2)},
    {{1, 6, 5, 5}, {6, 1, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 6)},
    {{2, 2, 1, 6}, {2, 2, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 1)},
    {{2, 2, 5, 1}, {2, 2, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 1)},
    {{1, 2, 2, 2}, {3, 2, 5, 5}, conv({1, 1}, {2, 2}, {1, 1}, 1)},
    {{4, 16, 14, 14}, {32, 16, 3, 3}, conv({1, 1}, {1, 1}, {1, 1}, 1)}};  // splits over images

TEST(ConvKernel, SameConvolutionMatchesTheGeneralPathBitForBit) {
  std::mt19937 rng(4);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& c : kSameCases)
      for (bool specials : {false, true}) {
        check_same_conv<float>(c, rng, specials);
        check_same_conv<double>(c, rng, specials);
      }
  }
  rt::set_num_threads(1);
}

// The input gradient starts from +0 on every path, so a zero cotangent gives +0, never -0.
TEST(ConvKernel, InputGradOfANegativeZeroCotangentIsPositiveZero) {
  std::mt19937 rng(5);
  for (const Case& c : {kSameCases[0], kCases[1], kCases[2]}) {
    Tensor<float> x = random_tensor<float>(c.x, rng), w = random_tensor<float>(c.w, rng);
    Tensor<float> g = run(ir::LibraryOp::Conv2d, ir::Op::Conv2d, c.attrs, x, w);
    std::fill(g.data.begin(), g.data.end(), -0.0f);
    ir::ConvAttrs a = c.attrs;
    a.grad_shape = c.x;
    for (float v : run(ir::LibraryOp::Conv2dInputGrad, ir::Op::Conv2dInputGrad, a, g, w).data)
      ASSERT_TRUE(v == 0 && !std::signbit(v)) << shape_str(c.x);
  }
}

TEST(ConvKernel, GradientsAreAdjointsOfTheForward) {
  std::mt19937 rng(3);
  rt::set_num_threads(2);
  for (Case c : kCases) {
    Tensor<double> x = random_tensor<double>(c.x, rng), w = random_tensor<double>(c.w, rng);
    Tensor<double> y = run(ir::LibraryOp::Conv2d, ir::Op::Conv2d, c.attrs, x, w);
    Tensor<double> g = random_tensor<double>(y.type.shape, rng);
    c.attrs.grad_shape = c.x;
    Tensor<double> gx = run(ir::LibraryOp::Conv2dInputGrad, ir::Op::Conv2dInputGrad, c.attrs, g, w);
    c.attrs.grad_shape = c.w;
    Tensor<double> gw = run(ir::LibraryOp::Conv2dWeightGrad, ir::Op::Conv2dWeightGrad, c.attrs, x, g);
    auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
      double s = 0;
      for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
      return s;
    };
    const double lhs = dot(y.data, g.data);
    EXPECT_NEAR(dot(x.data, gx.data), lhs, 1e-10 * (1 + std::abs(lhs))) << shape_str(c.x);
    EXPECT_NEAR(dot(w.data, gw.data), lhs, 1e-10 * (1 + std::abs(lhs))) << shape_str(c.x);
  }
  rt::set_num_threads(1);
}

// Output blocks (compiled epilogues): image by image, from scratch when there is no output
// buffer, each block bit for bit the plain kernel's image, every image exactly once, and each
// scratch block's address less its element offset 64-byte aligned (the epilogue indexes it by
// element).
TEST(ConvKernel, OutputBlocksGiveEachImageOnce) {
  std::mt19937 rng(11);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    ir::ConvAttrs a;
    a.padding = {1, 1};
    Tensor<float> x = random_tensor<float>({5, 3, 7, 6}, rng);
    Tensor<float> w = random_tensor<float>({4, 3, 3, 3}, rng);
    const Tensor<float> want = run<float>(ir::LibraryOp::Conv2d, ir::Op::Conv2d, a, x, w);
    const int64_t image = want.type.numel() / 5;
    for (bool with_output : {false, true}) {
      std::vector<float> got(want.data.size(), std::numeric_limits<float>::quiet_NaN());
      std::vector<int> seen(5, 0);
      std::mutex m;
      Tensor<float> y{want.type, {}};
      y.data.assign(want.data.size(), 0.0f);
      rt::OutputBlocks blocks;
      blocks.block_elems = image;
      blocks.done = [&](int64_t begin, int64_t end, const void* data) {
        std::lock_guard<std::mutex> lock(m);
        ASSERT_EQ(end - begin, image);
        ASSERT_EQ(begin % image, 0);
        if (with_output) {
          EXPECT_EQ(data, y.data.data() + begin);
        } else {
          EXPECT_EQ((reinterpret_cast<uintptr_t>(data) - begin * sizeof(float)) % 64, 0u);
        }
        ++seen[begin / image];
        std::memcpy(got.data() + begin, data, image * sizeof(float));
      };
      const rt::TensorRef in[] = {x.ref(), w.ref()};
      const rt::TensorRef out[] = {with_output ? y.ref() : rt::TensorRef{nullptr, &y.type}};
      rt::run_library(ir::LibraryOp::Conv2d, a, in, out, &blocks);
      EXPECT_EQ(seen, std::vector<int>(5, 1)) << threads << " threads";
      EXPECT_EQ(std::memcmp(got.data(), want.data.data(), got.size() * sizeof(float)), 0);
      if (with_output) {
        EXPECT_EQ(y.data, want.data);
      }
    }
    // The whole output as one block needs the output buffer.
    rt::OutputBlocks whole;
    whole.block_elems = want.type.numel();
    int calls = 0;
    whole.done = [&](int64_t begin, int64_t end, const void*) {
      ++calls;
      EXPECT_EQ(begin, 0);
      EXPECT_EQ(end, whole.block_elems);
    };
    Tensor<float> y{want.type, {}};
    y.data.assign(want.data.size(), 0.0f);
    const rt::TensorRef in[] = {x.ref(), w.ref()}, out[] = {y.ref()};
    rt::run_library(ir::LibraryOp::Conv2d, a, in, out, &whole);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(y.data, want.data);
    const rt::TensorRef none[] = {rt::TensorRef{nullptr, &y.type}};
    EXPECT_THROW(rt::run_library(ir::LibraryOp::Conv2d, a, in, none, &whole), InternalError);
    // Blocks of another size are refused, not split wrongly.
    whole.block_elems = image + 1;
    EXPECT_THROW(rt::run_library(ir::LibraryOp::Conv2d, a, in, out, &whole), InternalError);
  }
  rt::set_num_threads(1);
}

}  // namespace
}  // namespace lt
