// Both f32 paths of conv2d and its gradients (conv_paths.h: im2col around rt::gemm, and oneDNN's
// direct convolutions) against a float64 reference at the trainers' shapes (fmnist_cnn, and
// ResNet-20's 3x3 convolutions with stride 1 and 2 and its 1x1 stride-2 projections), odd sizes,
// groups, dilation, 1 and 2 threads; and the forward's epilogue blocks on the oneDNN path.
// Whichever path an entry point selects, the other stays correct. oneDNN's bf16 convolutions (on
// CPUs with bf16 instructions; skipped elsewhere) against the float64 convolution of the bf16
// operands, and as the entry points' choice for bf16.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/type_rules.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"
#include "tests/unit/runtime/host_tensor.h"

namespace lt {
namespace {

using rt::ConvPass;
using Tensor = testing::HostTensor<float>;
using testing::random_tensor;

struct Case {
  Shape x, w;
  ir::ConvAttrs attrs;
};

ir::ConvAttrs conv(int64_t stride, int64_t pad, int64_t dil = 1, int64_t groups = 1) {
  ir::ConvAttrs a;
  a.stride = {stride, stride};
  a.padding = {pad, pad};
  a.dilation = {dil, dil};
  a.groups = groups;
  return a;
}

// Batches of 5: chunks of images that do not divide the batch, on both paths.
const Case kTrainerCases[] = {
    {{5, 1, 28, 28}, {32, 1, 3, 3}, conv(1, 1)},    // fmnist_cnn conv1
    {{5, 32, 14, 14}, {64, 32, 3, 3}, conv(1, 1)},  // fmnist_cnn conv2
    {{5, 1, 32, 32}, {16, 1, 3, 3}, conv(1, 1)},    // ResNet-20 stem
    {{5, 16, 32, 32}, {16, 16, 3, 3}, conv(1, 1)},
    {{5, 16, 32, 32}, {32, 16, 3, 3}, conv(2, 1)},
    {{5, 16, 32, 32}, {32, 16, 1, 1}, conv(2, 0)},  // projection
    {{5, 32, 16, 16}, {32, 32, 3, 3}, conv(1, 1)},
    {{5, 32, 16, 16}, {64, 32, 3, 3}, conv(2, 1)},
    {{5, 32, 16, 16}, {64, 32, 1, 1}, conv(2, 0)},  // projection
    {{5, 64, 8, 8}, {64, 64, 3, 3}, conv(1, 1)}};

// oneDNN has JIT kernels for all of these; with 4 input channels per group, it has none for
// dilation or groups (conv_kernel_test.cpp covers those through the entry points, on im2col).
const Case kOddCases[] = {
    {{3, 3, 7, 9}, {5, 3, 3, 3}, conv(1, 1)},
    {{2, 13, 11, 6}, {7, 13, 3, 3}, conv(2, 1)},
    {{3, 5, 9, 9}, {3, 5, 5, 5}, conv(2, 2)},
    {{2, 16, 10, 11}, {6, 16, 3, 3}, conv(1, 2, 2)},    // dilation
    {{2, 32, 9, 8}, {48, 16, 3, 3}, conv(2, 1, 1, 2)},  // groups
    {{3, 16, 8, 8}, {16, 1, 3, 3}, conv(1, 1, 1, 16)},  // depthwise
    {{1, 6, 4, 4}, {2, 6, 4, 4}, conv(1, 0)}};          // kernel = input: 1x1 output

/// Sum of the products each output element adds up, and of their magnitudes (for the tolerance).
struct Reference {
  std::vector<double> y, gx, gw, y_abs, gx_abs, gw_abs;
};

Reference reference(const Case& c, const Tensor& x, const Tensor& w, const Tensor& gy) {
  const Shape& xs = c.x;
  const Shape& ws = c.w;
  const Shape& ys = gy.type.shape;
  const ir::ConvAttrs& a = c.attrs;
  Reference r{std::vector<double>(gy.data.size()), std::vector<double>(x.data.size()),
              std::vector<double>(w.data.size()), std::vector<double>(gy.data.size()),
              std::vector<double>(x.data.size()), std::vector<double>(w.data.size())};
  const int64_t og = ws[0] / a.groups, cg = ws[1];
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t o = 0; o < ws[0]; ++o)
      for (int64_t oy = 0; oy < ys[2]; ++oy)
        for (int64_t ox = 0; ox < ys[3]; ++ox)
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < ws[2]; ++i)
              for (int64_t j = 0; j < ws[3]; ++j) {
                const int64_t ih = oy * a.stride[0] - a.padding[0] + i * a.dilation[0];
                const int64_t iw = ox * a.stride[1] - a.padding[1] + j * a.dilation[1];
                if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
                const int64_t xi = ((n * xs[1] + o / og * cg + ci) * xs[2] + ih) * xs[3] + iw;
                const int64_t wi = ((o * cg + ci) * ws[2] + i) * ws[3] + j;
                const int64_t yi = ((n * ws[0] + o) * ys[2] + oy) * ys[3] + ox;
                const double fy = double(x.data[xi]) * w.data[wi];
                const double fx = double(gy.data[yi]) * w.data[wi];
                const double fw = double(gy.data[yi]) * x.data[xi];
                r.y[yi] += fy, r.y_abs[yi] += std::abs(fy);
                r.gx[xi] += fx, r.gx_abs[xi] += std::abs(fx);
                r.gw[wi] += fw, r.gw_abs[wi] += std::abs(fw);
              }
  return r;
}

/// Each element within a rounding bound of a sum of `terms` products (sqrt growth, as rounding
/// errors of random signs add up; a product left out or counted twice is far larger).
void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                  const std::vector<double>& abs_sum, double terms, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  const double rel = 16 * std::sqrt(terms) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], rel * abs_sum[i] + 1e-6) << what << " at " << i;
}

enum class Path { Im2col, Onednn };

Tensor output_of(ir::Op op, const Tensor& p, const Tensor& q, const ir::ConvAttrs& a) {
  const std::vector<TensorType> types = {p.type, q.type};
  Tensor y{ir::infer_types(op, types, a).at(0), {}};
  y.data.assign(y.type.numel(), std::numeric_limits<float>::quiet_NaN());  // must be overwritten
  return y;
}

Tensor run(Path path, ConvPass pass, const ir::ConvAttrs& attrs, Tensor& p, Tensor& q,
           const Shape& grad_shape) {
  using namespace rt;
  ir::ConvAttrs a = attrs;
  const ir::Op op = pass == ConvPass::Forward     ? ir::Op::Conv2d
                    : pass == ConvPass::InputGrad ? ir::Op::Conv2dInputGrad
                                                  : ir::Op::Conv2dWeightGrad;
  if (pass != ConvPass::Forward) a.grad_shape = grad_shape;
  Tensor out = output_of(op, p, q, a);
  const TensorRef in[] = {p.ref(), q.ref()}, outs[] = {out.ref()};
  const bool im2col = path == Path::Im2col;
  switch (pass) {
    case ConvPass::Forward:
      im2col ? conv2d_im2col(a, in, outs, nullptr) : conv2d_onednn(a, in, outs, nullptr);
      break;
    case ConvPass::InputGrad:
      im2col ? conv2d_input_grad_im2col(a, in, outs) : conv2d_input_grad_onednn(a, in, outs);
      break;
    case ConvPass::WeightGrad:
      im2col ? conv2d_weight_grad_im2col(a, in, outs) : conv2d_weight_grad_onednn(a, in, outs);
      break;
  }
  return out;
}

rt::ConvGeom geom(const Case& c, const Shape& y) { return rt::make_geom(c.x, c.w, y, c.attrs); }

bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

/// Runs the passes oneDNN has a kernel for (on AVX-512 CPUs, every pass of every case here must
/// have one); returns how many ran.
int check(Path path, const Case& c, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message() << (path == Path::Im2col ? "im2col" : "onednn") << " x="
               << shape_str(c.x) << " w=" << shape_str(c.w) << " stride=" << c.attrs.stride[0]
               << " groups=" << c.attrs.groups << " threads=" << rt::num_threads());
  Tensor x = random_tensor<float>(c.x, rng), w = random_tensor<float>(c.w, rng);
  Tensor gy = output_of(ir::Op::Conv2d, x, w, c.attrs);
  gy = random_tensor<float>(gy.type.shape, rng);
  const Reference r = reference(c, x, w, gy);
  const rt::ConvGeom g = geom(c, gy.type.shape);
  const double taps = double(g.col_rows()), pixels = double(g.n * g.oh * g.ow);
  int ran = 0;
  for (ConvPass pass : {ConvPass::Forward, ConvPass::InputGrad, ConvPass::WeightGrad}) {
    if (path == Path::Onednn && !rt::onednn_conv_supported(pass, g, DType::F32)) {
      EXPECT_FALSE(has_avx512()) << "oneDNN has no kernel for pass " << int(pass);
      continue;
    }
    ++ran;
    switch (pass) {
      case ConvPass::Forward:
        expect_close(run(path, pass, c.attrs, x, w, {}).data, r.y, r.y_abs, taps, "conv2d");
        break;
      case ConvPass::InputGrad:
        expect_close(run(path, pass, c.attrs, gy, w, c.x).data, r.gx, r.gx_abs,
                     double(g.og()) * taps, "input grad");
        break;
      case ConvPass::WeightGrad: {
        const Tensor gw = run(path, pass, c.attrs, x, gy, c.w);
        expect_close(gw.data, r.gw, r.gw_abs, pixels, "weight grad");
        // Same inputs, same thread count: the batch adds up in a fixed order.
        EXPECT_EQ(gw.data, run(path, pass, c.attrs, x, gy, c.w).data);
        break;
      }
    }
  }
  return ran;
}

void check_cases(Path path, std::span<const Case> cases, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    int ran = 0;
    for (const Case& c : cases) ran += check(path, c, rng);
    if (has_avx512()) {
      EXPECT_EQ(ran, 3 * static_cast<int>(cases.size()));
    }
  }
  rt::set_num_threads(1);
}

TEST(ConvPaths, Im2colMatchesReferenceAtTrainerShapes) {
  check_cases(Path::Im2col, kTrainerCases, 1);
}

TEST(ConvPaths, OnednnMatchesReferenceAtTrainerShapes) {
  check_cases(Path::Onednn, kTrainerCases, 2);
}

TEST(ConvPaths, Im2colMatchesReferenceAtOddShapes) { check_cases(Path::Im2col, kOddCases, 3); }

TEST(ConvPaths, OnednnMatchesReferenceAtOddShapes) { check_cases(Path::Onednn, kOddCases, 4); }

// Output blocks (compiled epilogues) on the oneDNN path: image by image, from scratch when there
// is no output buffer, each block bit for bit the plain call's image, every image exactly once,
// each scratch block's address less its element offset 64-byte aligned; or the whole output once.
TEST(ConvPaths, OnednnOutputBlocksGiveEachImageOnce) {
  std::mt19937 rng(5);
  const Case c = {{7, 16, 8, 8}, {32, 16, 3, 3}, conv(1, 1)};  // chunks of images and a remainder
  Tensor x = random_tensor<float>(c.x, rng), w = random_tensor<float>(c.w, rng);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    Tensor want = run(Path::Onednn, ConvPass::Forward, c.attrs, x, w, {});
    const int64_t images = c.x[0], image = want.type.numel() / images;
    const rt::TensorRef in[] = {x.ref(), w.ref()};
    for (bool with_output : {false, true}) {
      std::vector<float> got(want.data.size(), std::numeric_limits<float>::quiet_NaN());
      std::vector<int> seen(images, 0);
      std::mutex m;
      Tensor y = output_of(ir::Op::Conv2d, x, w, c.attrs);
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
      const rt::TensorRef out[] = {with_output ? y.ref() : rt::TensorRef{nullptr, &y.type}};
      rt::conv2d_onednn(c.attrs, in, out, &blocks);
      EXPECT_EQ(seen, std::vector<int>(images, 1)) << threads << " threads";
      EXPECT_EQ(std::memcmp(got.data(), want.data.data(), got.size() * sizeof(float)), 0);
      if (with_output) {
        EXPECT_EQ(std::memcmp(y.data.data(), want.data.data(), got.size() * sizeof(float)), 0);
      }
    }
    rt::OutputBlocks whole;
    whole.block_elems = want.type.numel();
    int calls = 0;
    whole.done = [&](int64_t begin, int64_t end, const void* data) {
      ++calls;
      EXPECT_EQ(begin, 0);
      EXPECT_EQ(end, whole.block_elems);
      EXPECT_EQ(std::memcmp(data, want.data.data(), want.data.size() * sizeof(float)), 0);
    };
    Tensor y = output_of(ir::Op::Conv2d, x, w, c.attrs);
    const rt::TensorRef out[] = {y.ref()};
    rt::conv2d_onednn(c.attrs, in, out, &whole);
    EXPECT_EQ(calls, 1);
    const rt::TensorRef none[] = {rt::TensorRef{nullptr, &y.type}};
    EXPECT_THROW(rt::conv2d_onednn(c.attrs, in, none, &whole), InternalError);
    whole.block_elems = image + 1;  // blocks of another size are refused, not split wrongly
    EXPECT_THROW(rt::conv2d_onednn(c.attrs, in, out, &whole), InternalError);
  }
  rt::set_num_threads(1);
}

// The input gradient starts from +0 on every path, so a zero cotangent gives +0, never -0.
TEST(ConvPaths, OnednnInputGradOfANegativeZeroCotangentIsPositiveZero) {
  std::mt19937 rng(7);
  for (const Case& c : {kTrainerCases[1], kTrainerCases[4], kTrainerCases[5]}) {
    Tensor x = random_tensor<float>(c.x, rng), w = random_tensor<float>(c.w, rng);
    Tensor gy = output_of(ir::Op::Conv2d, x, w, c.attrs);
    std::fill(gy.data.begin(), gy.data.end(), -0.0f);
    for (float v : run(Path::Onednn, ConvPass::InputGrad, c.attrs, gy, w, c.x).data)
      ASSERT_TRUE(v == 0 && !std::signbit(v)) << shape_str(c.x);
  }
}

// The entry points run f64 on im2col, whatever oneDNN takes.
TEST(ConvPaths, OnednnTakesNoF64) {
  const Case c = kTrainerCases[3];
  const rt::ConvGeom g = geom(c, {c.x[0], c.w[0], c.x[2], c.x[3]});
  if (!has_avx512()) GTEST_SKIP() << "no AVX-512";
  EXPECT_TRUE(rt::onednn_conv_supported(ConvPass::Forward, g, DType::F32));
  std::mt19937 rng(6);
  auto x = random_tensor<double>(c.x, rng), w = random_tensor<double>(c.w, rng);
  testing::HostTensor<double> y{{DType::F64, {c.x[0], c.w[0], c.x[2], c.x[3]}}, {}};
  y.data.assign(y.type.numel(), 0.0);
  const rt::TensorRef in[] = {x.ref(), w.ref()}, out[] = {y.ref()};
  rt::run_library(ir::LibraryOp::Conv2d, c.attrs, in, out);
  testing::HostTensor<double> y2 = y;
  const rt::TensorRef out2[] = {y2.ref()};
  rt::conv2d_im2col(c.attrs, in, out2, nullptr);
  EXPECT_EQ(y.data, y2.data);
}

/// bf16 bits by round to nearest even (finite values), and back: the reference's own rounding.
uint16_t to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}
float from_bf16(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }
constexpr uint16_t kBf16Nan = 0x7fc0;

/// A tensor of bf16 values, kept as the bf16 operand a kernel reads and as f32 for the reference.
struct Bf16Tensor {
  Tensor f32;  // the same values, exactly
  testing::HostTensor<uint16_t> bf16;
};

Bf16Tensor bf16_of(const Tensor& t) {
  Bf16Tensor out{t, {{DType::BF16, t.type.shape}, {}}};
  for (float& v : out.f32.data) {
    out.bf16.data.push_back(to_bf16(v));
    v = from_bf16(out.bf16.data.back());
  }
  return out;
}

/// A case's bf16 operands (random x and w, and an output gradient gy), the output's shape, the
/// float64 reference of every pass on them, and the call's geometry.
struct Bf16Problem {
  Bf16Tensor x, w, gy;
  Shape ys;
  Reference r;
  rt::ConvGeom g;
};

Bf16Problem bf16_problem(const Case& c, std::mt19937& rng) {
  Bf16Tensor x = bf16_of(random_tensor<float>(c.x, rng));
  Bf16Tensor w = bf16_of(random_tensor<float>(c.w, rng));
  const Shape ys = output_of(ir::Op::Conv2d, x.f32, w.f32, c.attrs).type.shape;
  Bf16Tensor gy = bf16_of(random_tensor<float>(ys, rng));
  Reference r = reference(c, x.f32, w.f32, gy.f32);
  return {std::move(x), std::move(w), std::move(gy), ys, std::move(r), geom(c, ys)};
}

/// A bf16 output of `op`, filled with NaN (it must be overwritten).
testing::HostTensor<uint16_t> bf16_output(ir::Op op, const Shape& p, const Shape& q,
                                          const ir::ConvAttrs& a) {
  const std::vector<TensorType> types = {{DType::BF16, p}, {DType::BF16, q}};
  const TensorType t = ir::infer_types(op, types, a).at(0);
  return {t, std::vector<uint16_t>(t.numel(), kBf16Nan)};
}

/// Each element within the rounding of its f32 sum to bf16 (2^-8 relative) and that sum's error.
void expect_close_bf16(const std::vector<uint16_t>& got, const std::vector<double>& want,
                       const std::vector<double>& abs_sum, double terms, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  const double rel = 16 * std::sqrt(terms) * std::ldexp(1.0, -24);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(from_bf16(got[i]), want[i],
                std::ldexp(std::abs(want[i]), -8) + rel * abs_sum[i] + 1e-6)
        << what << " at " << i;
}

bool onednn_has_bf16(const Case& c) {
  const Shape y = {c.x[0], c.w[0], c.x[2], c.x[3]};
  return rt::onednn_conv_supported(ConvPass::Forward, geom(c, y), DType::BF16);
}

/// v of shape [N, C, H, W] reordered to [N, H, W, C] (to_nhwc) or back.
template <class T>
std::vector<T> reorder_nchw(const std::vector<T>& v, const Shape& nchw, bool to_nhwc) {
  const int64_t n = nchw[0], c = nchw[1], hw = nchw[2] * nchw[3];
  std::vector<T> out(v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) {
        const int64_t first = (i * c + ch) * hw + p, last = (i * hw + p) * c + ch;
        if (to_nhwc) out[last] = v[first];
        else out[first] = v[last];
      }
  return out;
}

/// Each element within its f32 sum's error alone (no rounding to bf16: at least one element is
/// not a bf16 value).
void expect_unrounded_f32(const std::vector<float>& got, const std::vector<double>& want,
                          const std::vector<double>& abs_sum, double terms,
                          const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  const double rel = 16 * std::sqrt(terms) * std::ldexp(1.0, -24);
  size_t off_bf16 = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], rel * abs_sum[i] + 1e-6) << what << " at " << i;
    off_bf16 += from_bf16(to_bf16(got[i])) != got[i];
  }
  EXPECT_GT(off_bf16, 0u) << what;
}

// f32_out: each pass on bf16 operands writes its f32 sum unrounded, on oneDNN's bf16 kernels
// (channels-first and channels-last activations, where the CPU has them) and through the widened
// f32 path; and the bf16 results channels-last too (the ResNet's one-channel stem runs so).
TEST(ConvPaths, Bf16WithF32OutIsTheUnroundedSum) {
  std::mt19937 rng(9);
  for (const Case& c : {kTrainerCases[1], kTrainerCases[2], kTrainerCases[4], kTrainerCases[5]}) {
    SCOPED_TRACE(::testing::Message() << "x=" << shape_str(c.x) << " w=" << shape_str(c.w));
    Bf16Problem p = bf16_problem(c, rng);
    auto& [x, w, gy, ys, r, g] = p;
    const double taps = double(g.col_rows()), pixels = double(g.n * g.oh * g.ow);
    enum class Path { Onednn, OnednnChannelsLast, ViaF32 };
    for (Path path : {Path::Onednn, Path::OnednnChannelsLast, Path::ViaF32}) {
      for (bool wide : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "path " << int(path) << " f32_out " << wide);
        const bool last = path == Path::OnednnChannelsLast;
        if (path != Path::ViaF32 &&
            !rt::onednn_conv_supported(ConvPass::Forward, g, DType::BF16, DType::F32))
          continue;
        if (!wide && !last) continue;  // OnednnBf16MatchesReferenceAtTrainerShapes has those
        ir::ConvAttrs a = c.attrs;
        a.f32_out = wide;
        a.channels_last = last;
        // Operands as the layout wants them, results back in NCHW for the reference.
        auto laid = [&](const Bf16Tensor& t) {
          testing::HostTensor<uint16_t> u = t.bf16;
          if (last) {
            u.data = reorder_nchw(u.data, t.f32.type.shape, true);
            const Shape& s = t.f32.type.shape;
            u.type.shape = {s[0], s[2], s[3], s[1]};
          }
          return u;
        };
        testing::HostTensor<uint16_t> xl = laid(x), gyl = laid(gy), wl = w.bf16;
        // Runs pass `op` and checks its result (NCHW shape `nchw`) against the reference.
        auto check = [&](ir::Op op, testing::HostTensor<uint16_t>& in0,
                         testing::HostTensor<uint16_t>& in1, const Shape& nchw,
                         const std::vector<double>& want, const std::vector<double>& abs,
                         double terms, const char* what) {
          const std::vector<TensorType> types = {in0.type, in1.type};
          const TensorType t = ir::infer_types(op, types, a).at(0);
          EXPECT_EQ(t.dtype, wide ? DType::F32 : DType::BF16);
          Tensor y32{t, std::vector<float>(wide ? t.numel() : 0,
                                           std::numeric_limits<float>::quiet_NaN())};
          testing::HostTensor<uint16_t> y16{t, std::vector<uint16_t>(wide ? 0 : t.numel(),
                                                                     kBf16Nan)};
          const rt::TensorRef ins[] = {in0.ref(), in1.ref()};
          const rt::TensorRef outs[] = {wide ? y32.ref() : y16.ref()};
          if (path == Path::ViaF32) {
            rt::conv_low_via_f32(ins, outs, nullptr, [&](rt::Ins i, rt::Outs o, auto*) {
              if (op == ir::Op::Conv2d) rt::conv2d_im2col(a, i, o, nullptr);
              else if (op == ir::Op::Conv2dInputGrad) rt::conv2d_input_grad_im2col(a, i, o);
              else rt::conv2d_weight_grad_im2col(a, i, o);
            });
          } else if (op == ir::Op::Conv2d) {
            rt::conv2d_onednn(a, ins, outs, nullptr);
          } else if (op == ir::Op::Conv2dInputGrad) {
            rt::conv2d_input_grad_onednn(a, ins, outs);
          } else {
            rt::conv2d_weight_grad_onednn(a, ins, outs);
          }
          const bool activation = op != ir::Op::Conv2dWeightGrad && last;
          if (wide)
            expect_unrounded_f32(activation ? reorder_nchw(y32.data, nchw, false) : y32.data,
                                 want, abs, terms, what);
          else
            expect_close_bf16(activation ? reorder_nchw(y16.data, nchw, false) : y16.data, want,
                              abs, terms, what);
        };
        check(ir::Op::Conv2d, xl, wl, ys, r.y, r.y_abs, taps, "conv2d");
        a.grad_shape = xl.type.shape;
        check(ir::Op::Conv2dInputGrad, gyl, wl, c.x, r.gx, r.gx_abs, double(g.og()) * taps,
              "input grad");
        a.grad_shape = c.w;
        check(ir::Op::Conv2dWeightGrad, xl, gyl, c.w, r.gw, r.gw_abs, pixels, "weight grad");
      }
    }
  }
}

// Every pass of every trainer shape on oneDNN's bf16 kernels, at 1 and 2 threads; and each entry
// point picks that path for bf16 (the same bits).
TEST(ConvPaths, OnednnBf16MatchesReferenceAtTrainerShapes) {
  if (!onednn_has_bf16(kTrainerCases[3]))
    GTEST_SKIP() << "no oneDNN bf16 convolution on this CPU (bf16 GEMM: "
                 << rt::gemm_bf16_backend() << ")";
  std::mt19937 rng(8);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& c : kTrainerCases) {
      SCOPED_TRACE(::testing::Message() << "x=" << shape_str(c.x) << " w=" << shape_str(c.w)
                                        << " stride=" << c.attrs.stride[0] << " threads="
                                        << threads);
      Bf16Problem p = bf16_problem(c, rng);
      auto& [x, w, gy, ys, r, g] = p;
      for (ConvPass pass : {ConvPass::Forward, ConvPass::InputGrad, ConvPass::WeightGrad})
        ASSERT_TRUE(rt::onednn_conv_supported(pass, g, DType::BF16)) << "pass " << int(pass);
      const double taps = double(g.col_rows()), pixels = double(g.n * g.oh * g.ow);

      ir::ConvAttrs a = c.attrs;
      auto y = bf16_output(ir::Op::Conv2d, c.x, c.w, a), y2 = y;
      const rt::TensorRef fwd_in[] = {x.bf16.ref(), w.bf16.ref()};
      const rt::TensorRef fwd_out[] = {y.ref()}, fwd_out2[] = {y2.ref()};
      rt::conv2d_onednn(a, fwd_in, fwd_out, nullptr);
      expect_close_bf16(y.data, r.y, r.y_abs, taps, "conv2d");
      rt::conv2d(a, fwd_in, fwd_out2, nullptr);
      EXPECT_EQ(std::memcmp(y.data.data(), y2.data.data(), y.data.size() * 2), 0) << "conv2d";

      a.grad_shape = c.x;
      auto gx = bf16_output(ir::Op::Conv2dInputGrad, ys, c.w, a), gx2 = gx;
      const rt::TensorRef gx_in[] = {gy.bf16.ref(), w.bf16.ref()};
      const rt::TensorRef gx_out[] = {gx.ref()}, gx_out2[] = {gx2.ref()};
      rt::conv2d_input_grad_onednn(a, gx_in, gx_out);
      expect_close_bf16(gx.data, r.gx, r.gx_abs, double(g.og()) * taps, "input grad");
      rt::conv2d_input_grad(a, gx_in, gx_out2);
      EXPECT_EQ(std::memcmp(gx.data.data(), gx2.data.data(), gx.data.size() * 2), 0)
          << "input grad";

      a.grad_shape = c.w;
      auto gw = bf16_output(ir::Op::Conv2dWeightGrad, c.x, ys, a), gw2 = gw;
      const rt::TensorRef gw_in[] = {x.bf16.ref(), gy.bf16.ref()};
      const rt::TensorRef gw_out[] = {gw.ref()}, gw_out2[] = {gw2.ref()};
      rt::conv2d_weight_grad_onednn(a, gw_in, gw_out);
      expect_close_bf16(gw.data, r.gw, r.gw_abs, pixels, "weight grad");
      rt::conv2d_weight_grad(a, gw_in, gw_out2);
      EXPECT_EQ(std::memcmp(gw.data.data(), gw2.data.data(), gw.data.size() * 2), 0)
          << "weight grad";
    }
  }
  rt::set_num_threads(1);
}

/// An epilogue that keeps a copy of each block it is handed, from any thread, and counts the
/// blocks per image; each must be one whole image whose address less its element offset is
/// 64-byte aligned (as OutputBlocks promises for scratch).
struct ImageBlocks {
  int64_t image, esize;  // elements per image, bytes per element
  std::vector<char> got;
  std::vector<int> seen;
  std::mutex m;

  ImageBlocks(int64_t images, int64_t image_elems, int64_t elem_bytes)
      : image(image_elems), esize(elem_bytes), got(images * image_elems * elem_bytes, 0x7f),
        seen(images, 0) {}
  rt::OutputBlocks blocks() {
    rt::OutputBlocks b;
    b.block_elems = image;
    b.done = [this](int64_t begin, int64_t end, const void* data) {
      std::lock_guard<std::mutex> lock(m);
      ASSERT_EQ(end - begin, image);
      EXPECT_EQ((reinterpret_cast<uintptr_t>(data) - begin * esize) % 64, 0u);
      ++seen[begin / image];
      std::memcpy(got.data() + begin * esize, data, image * esize);
    };
    return b;
  }
};

// A bf16 forward hands its epilogue each image once, in bf16, the plain call's bits, also from
// scratch when there is no output buffer.
TEST(ConvPaths, OnednnBf16OutputBlocksGiveEachImageOnce) {
  const Case c = {{7, 16, 8, 8}, {32, 16, 3, 3}, conv(1, 1)};  // chunks of images and a remainder
  if (!onednn_has_bf16(c)) GTEST_SKIP() << "no oneDNN bf16 convolution on this CPU";
  std::mt19937 rng(9);
  Bf16Tensor x = bf16_of(random_tensor<float>(c.x, rng));
  Bf16Tensor w = bf16_of(random_tensor<float>(c.w, rng));
  const rt::TensorRef in[] = {x.bf16.ref(), w.bf16.ref()};
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    auto want = bf16_output(ir::Op::Conv2d, c.x, c.w, c.attrs);
    const rt::TensorRef want_out[] = {want.ref()};
    rt::conv2d_onednn(c.attrs, in, want_out, nullptr);
    const int64_t images = c.x[0];
    ImageBlocks got(images, want.type.numel() / images, sizeof(uint16_t));
    const rt::OutputBlocks blocks = got.blocks();
    const rt::TensorRef none[] = {rt::TensorRef{nullptr, &want.type}};
    rt::conv2d_onednn(c.attrs, in, none, &blocks);
    EXPECT_EQ(got.seen, std::vector<int>(images, 1)) << threads << " threads";
    EXPECT_EQ(std::memcmp(got.got.data(), want.data.data(), got.got.size()), 0) << threads;
  }
  rt::set_num_threads(1);
}

// The direct one-channel path (channels-last, conv_one_channel.cpp): the forward and the weight
// gradient against the float64 reference on f32 operands and on bf16 ones (to bf16 and to f32),
// at 1 and 2 threads: the two trainers' first convolutions, and other kernel sizes, strides,
// dilation and channel counts (one vector of 16, two, and both in one call). The forward's
// images go to output blocks once each, the plain call's bits, also from scratch; the weight
// gradient's bits do not depend on the thread count; the entry points take this path.
TEST(ConvPaths, OneChannelChannelsLastMatchesReference) {
  const Case cases[] = {kTrainerCases[0], kTrainerCases[2],
                        {{3, 1, 9, 7}, {48, 1, 5, 3}, conv(2, 2)},
                        {{2, 1, 10, 11}, {16, 1, 3, 3}, conv(1, 2, 2)},
                        {{9, 1, 6, 6}, {64, 1, 2, 2}, conv(1, 0)}};
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    Bf16Problem p = bf16_problem(c, rng);
    auto& [x, w, gy, ys, r, g] = p;
    const double taps = double(g.col_rows()), pixels = double(g.n * g.oh * g.ow);
    const Shape x_last = {c.x[0], c.x[2], c.x[3], 1}, y_last = {ys[0], ys[2], ys[3], ys[1]};
    for (DType t : {DType::F32, DType::BF16})
      for (bool wide : {false, true}) {
        if (t == DType::F32 && wide) continue;
        ir::ConvAttrs a = c.attrs;
        a.channels_last = true;
        a.f32_out = wide;
        const DType out_t = t == DType::F32 || wide ? DType::F32 : DType::BF16;
        SCOPED_TRACE(::testing::Message() << "x=" << shape_str(c.x) << " w=" << shape_str(c.w)
                                          << " " << dtype_name(t) << " f32_out " << wide);
        const rt::ConvGeom gl = rt::make_geom(x_last, c.w, y_last, a);
        ASSERT_TRUE(rt::one_channel_conv_supported(ConvPass::Forward, gl, t, out_t));
        ASSERT_TRUE(rt::one_channel_conv_supported(ConvPass::WeightGrad, gl, t, out_t));
        EXPECT_FALSE(rt::one_channel_conv_supported(ConvPass::InputGrad, gl, t, out_t));
        // Operands in t (one input channel: the NCHW bytes are the channels-last ones).
        const size_t esize = t == DType::F32 ? 4 : 2;
        auto bytes_of = [&](const Bf16Tensor& v, bool to_last) {
          std::vector<char> out(v.f32.data.size() * esize);
          const std::vector<float> f = to_last ? reorder_nchw(v.f32.data, v.f32.type.shape, true)
                                               : v.f32.data;
          const std::vector<uint16_t> h = to_last ? reorder_nchw(v.bf16.data, v.f32.type.shape,
                                                                 true)
                                                  : v.bf16.data;
          if (t == DType::F32) std::memcpy(out.data(), f.data(), out.size());
          else std::memcpy(out.data(), h.data(), out.size());
          return out;
        };
        std::vector<char> xb = bytes_of(x, false), wb = bytes_of(w, false), gyb = bytes_of(gy, true);
        const TensorType xt{t, x_last}, wt{t, c.w}, gyt{t, y_last};
        const TensorType yt{out_t, y_last}, gwt{out_t, c.w};
        // A result's elements as floats.
        auto floats = [&](const std::vector<char>& v) {
          std::vector<float> f(v.size() / (out_t == DType::F32 ? 4 : 2));
          for (size_t i = 0; i < f.size(); ++i) {
            if (out_t == DType::F32) {
              std::memcpy(&f[i], v.data() + 4 * i, 4);
            } else {
              uint16_t h;
              std::memcpy(&h, v.data() + 2 * i, 2);
              f[i] = from_bf16(h);
            }
          }
          return f;
        };
        auto check = [&](const std::vector<float>& got, const std::vector<double>& want,
                         const std::vector<double>& abs, double terms, const char* what) {
          if (out_t == DType::BF16) {
            std::vector<uint16_t> h(got.size());
            for (size_t i = 0; i < got.size(); ++i) h[i] = to_bf16(got[i]);
            expect_close_bf16(h, want, abs, terms, what);
          } else {
            expect_close(got, want, abs, terms, what);
          }
        };
        std::vector<char> y_first, gw_first;
        for (int threads : {1, 2}) {
          rt::set_num_threads(threads);
          const rt::TensorRef fwd_in[] = {{xb.data(), &xt}, {wb.data(), &wt}};
          std::vector<char> yb(yt.numel() * dtype_size(out_t), char(0x7f));
          const rt::TensorRef fwd_out[] = {{yb.data(), &yt}};
          rt::conv2d_one_channel(a, fwd_in, fwd_out, nullptr);
          check(reorder_nchw(floats(yb), ys, false), r.y, r.y_abs, taps, "conv2d");
          std::vector<char> y2(yb.size(), char(0x7f));
          const rt::TensorRef fwd_out2[] = {{y2.data(), &yt}};
          rt::conv2d(a, fwd_in, fwd_out2, nullptr);
          EXPECT_EQ(y2, yb) << "rt::conv2d takes the path";
          if (threads == 1) y_first = yb;
          EXPECT_EQ(yb, y_first) << threads << " threads";
          // Image blocks from scratch, each once, the plain call's bits.
          ImageBlocks got(c.x[0], yt.numel() / c.x[0], dtype_size(out_t));
          const rt::OutputBlocks blocks = got.blocks();
          const rt::TensorRef none[] = {{nullptr, &yt}};
          rt::conv2d_one_channel(a, fwd_in, none, &blocks);
          EXPECT_EQ(got.seen, std::vector<int>(c.x[0], 1));
          EXPECT_EQ(got.got, yb);

          ir::ConvAttrs ga = a;
          ga.grad_shape = c.w;
          const rt::TensorRef gw_in[] = {{xb.data(), &xt}, {gyb.data(), &gyt}};
          std::vector<char> gwb(gwt.numel() * dtype_size(out_t), char(0x7f));
          const rt::TensorRef gw_out[] = {{gwb.data(), &gwt}};
          rt::conv2d_weight_grad_one_channel(ga, gw_in, gw_out);
          check(floats(gwb), r.gw, r.gw_abs, pixels, "weight grad");
          std::vector<char> gw2(gwb.size(), char(0x7f));
          const rt::TensorRef gw_out2[] = {{gw2.data(), &gwt}};
          rt::conv2d_weight_grad(ga, gw_in, gw_out2);
          EXPECT_EQ(gw2, gwb) << "rt::conv2d_weight_grad takes the path";
          if (threads == 1) gw_first = gwb;
          EXPECT_EQ(gwb, gw_first) << threads << " threads";
        }
      }
  }
  rt::set_num_threads(1);
  // An empty batch: no output, and a weight gradient of +0.
  ir::ConvAttrs a = conv(1, 1);
  a.channels_last = true;
  a.grad_shape = {16, 1, 3, 3};
  const TensorType xt{DType::F32, {0, 5, 5, 1}}, gyt{DType::F32, {0, 5, 5, 16}};
  Tensor gw{{DType::F32, a.grad_shape}, std::vector<float>(144, -1.0f)};
  const rt::TensorRef in[] = {{nullptr, &xt}, {nullptr, &gyt}}, out[] = {gw.ref()};
  rt::conv2d_weight_grad_one_channel(a, in, out);
  for (float v : gw.data) EXPECT_TRUE(v == 0 && !std::signbit(v));
  const rt::TensorRef fwd_in[] = {{nullptr, &xt}, gw.ref()}, fwd_out[] = {{nullptr, &gyt}};
  rt::conv2d_one_channel(a, fwd_in, fwd_out, nullptr);
  // A NaN with a payload rounds to bf16 as a cast does: the quiet NaN of its sign.
  a.grad_shape = {};
  const TensorType x1{DType::BF16, {1, 3, 3, 1}}, w1{DType::BF16, {16, 1, 3, 3}},
                   y1{DType::BF16, {1, 3, 3, 16}};
  std::vector<uint16_t> xb(9, to_bf16(0.5f)), wb(144, to_bf16(0.25f)), yb(144, 0);
  xb[4] = 0xffa1;  // a negative NaN, payload 0x21: every output pixel reads it
  const rt::TensorRef nan_in[] = {{xb.data(), &x1}, {wb.data(), &w1}}, nan_out[] = {{yb.data(), &y1}};
  rt::conv2d_one_channel(a, nan_in, nan_out, nullptr);
  for (uint16_t v : yb) EXPECT_EQ(v & 0x7fff, 0x7fc0) << std::hex << v;
}

// The weight gradient of a channels-last convolution as one GEMM (conv_weight_grad_gemm.cpp),
// against its definition summed in f64 (gw[o][c][ki][kj] = sum over the output pixels p of
// gy[p][o] times the input value tap (ki, kj) of p reads, 0 in the padding), 1x1 at stride 1 and
// 2 and 3x3 with padding, stride and dilation, f32 and bf16 (to f32 and to bf16), at 1 and 2
// threads with the same bits; which geometries take it; the entry point takes it.
TEST(ConvPaths, WeightGradIsOneGemm) {
  struct PointCase {
    int64_t n, h, w, c, o, stride, k = 1, pad = 0, dil = 1;
  };
  const PointCase cases[] = {{2, 4, 4, 48, 40, 1},           {3, 7, 5, 32, 64, 2},
                             {4, 16, 16, 24, 8, 1},          {2, 6, 5, 16, 24, 1, 3, 1},
                             {3, 9, 8, 8, 16, 2, 3, 1},      {2, 7, 7, 12, 8, 1, 3, 2, 2}};
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const PointCase& pc : cases) {
    const int64_t span = pc.dil * (pc.k - 1) + 1, taps = pc.k * pc.k;
    const int64_t oh = (pc.h + 2 * pc.pad - span) / pc.stride + 1;
    const int64_t ow = (pc.w + 2 * pc.pad - span) / pc.stride + 1;
    const int64_t pixels = pc.n * oh * ow, size = pc.o * pc.c * taps;
    std::vector<float> x(pc.n * pc.h * pc.w * pc.c), gy(pixels * pc.o);
    for (float& v : x) v = from_bf16(to_bf16(u(rng)));  // exact in bf16 too
    for (float& v : gy) v = from_bf16(to_bf16(u(rng)));
    std::vector<double> want(size, 0), abs(size, 0);
    for (int64_t n = 0; n < pc.n; ++n)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t ki = 0; ki < pc.k; ++ki)
            for (int64_t kj = 0; kj < pc.k; ++kj) {
              const int64_t y = i * pc.stride - pc.pad + ki * pc.dil;
              const int64_t xx = j * pc.stride - pc.pad + kj * pc.dil;
              if (y < 0 || y >= pc.h || xx < 0 || xx >= pc.w) continue;
              const int64_t p = (n * oh + i) * ow + j;
              const float* row = &x[((n * pc.h + y) * pc.w + xx) * pc.c];
              for (int64_t o = 0; o < pc.o; ++o)
                for (int64_t c = 0; c < pc.c; ++c) {
                  const double t = double(gy[p * pc.o + o]) * row[c];
                  const int64_t at = (o * pc.c + c) * taps + ki * pc.k + kj;
                  want[at] += t;
                  abs[at] += std::abs(t);
                }
            }
    ir::ConvAttrs a = conv(pc.stride, pc.pad, pc.dil);
    a.channels_last = true;
    a.grad_shape = {pc.o, pc.c, pc.k, pc.k};
    const Shape xs = {pc.n, pc.h, pc.w, pc.c}, ys = {pc.n, oh, ow, pc.o};
    for (DType t : {DType::F32, DType::BF16})
      for (DType out_t : {DType::F32, DType::BF16}) {
        if (t == DType::F32 && out_t == DType::BF16) continue;
        SCOPED_TRACE(::testing::Message() << "x=" << shape_str(xs) << " k " << pc.k << " stride "
                                          << pc.stride << " pad " << pc.pad << " dilation "
                                          << pc.dil << " " << dtype_name(t) << " -> "
                                          << dtype_name(out_t));
        const rt::ConvGeom g = rt::make_geom(xs, a.grad_shape, ys, a);
        // bf16 wherever its GEMM runs on AMX; f32 1x1s without padding below 1024 output pixels;
        // AVX-512 CPUs only.
        const bool avx512 = std::string(rt::gemm_backend()) == "onednn";
        const bool amx = std::string(rt::gemm_bf16_backend()) == "onednn-amx";
        const bool pointwise = pc.k == 1 && pc.pad == 0;
        ASSERT_EQ(rt::weight_grad_gemm_supported(g, t, out_t),
                  avx512 && ((t == DType::BF16 && amx) || (pointwise && pixels < 1024)));
        if (!rt::weight_grad_gemm_supported(g, t, out_t)) continue;
        auto bytes = [&](const std::vector<float>& v) {
          std::vector<char> b(v.size() * dtype_size(t));
          for (size_t i = 0; i < v.size(); ++i) {
            if (t == DType::F32) std::memcpy(b.data() + 4 * i, &v[i], 4);
            else {
              const uint16_t h = to_bf16(v[i]);
              std::memcpy(b.data() + 2 * i, &h, 2);
            }
          }
          return b;
        };
        std::vector<char> xb = bytes(x), gyb = bytes(gy);
        const TensorType xt{t, xs}, gyt{t, ys}, gwt{out_t, a.grad_shape};
        const rt::TensorRef in[] = {{xb.data(), &xt}, {gyb.data(), &gyt}};
        std::vector<char> first;
        for (int threads : {1, 2}) {
          rt::set_num_threads(threads);
          std::vector<char> gw(gwt.numel() * dtype_size(out_t), char(0x7f));
          const rt::TensorRef out[] = {{gw.data(), &gwt}};
          rt::conv2d_weight_grad_gemm(a, in, out);
          for (int64_t k = 0; k < size; ++k) {
            float got;
            if (out_t == DType::F32) {
              std::memcpy(&got, gw.data() + 4 * k, 4);
            } else {
              uint16_t h;
              std::memcpy(&h, gw.data() + 2 * k, 2);
              got = from_bf16(h);
            }
            // f32 sums: a few roundings of the terms' magnitude; bf16: one rounding of the result.
            const double tol =
                1e-6 * abs[k] + (out_t == DType::BF16 ? std::abs(want[k]) / 128 : 0);
            ASSERT_NEAR(got, want[k], tol) << "gw[" << k << "]";
          }
          std::vector<char> again(gw.size(), char(0x7f));
          const rt::TensorRef out2[] = {{again.data(), &gwt}};
          rt::conv2d_weight_grad(a, in, out2);
          EXPECT_EQ(again, gw) << "rt::conv2d_weight_grad takes the path";
          if (threads == 1) first = gw;
          EXPECT_EQ(gw, first) << threads << " threads";
        }
      }
  }
  rt::set_num_threads(1);
}

}  // namespace
}  // namespace lt
