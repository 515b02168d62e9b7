// Eager-mode micro-benchmarks and one eager MLP training step (docs/RESULTS.md has the figures,
// docs/BENCHMARKS.md the commands). Each benchmark's last argument is the thread count (1 or 2).
//
//   GEMM       frontend matmul of two f32 [n,n] tensors (n = 512, 1024): GFLOP/s = 2n^3 / time.
//              BM_GemmKernel calls rt::gemm on preallocated buffers (no tensor allocation).
//   add        frontend add of two f32 16M-element (64 MiB) tensors: GB/s = 3 * 64 MiB / time
//              (read a, read b, write y; 1 GB = 1e9 bytes). The frontend allocates a fresh 64 MiB
//              output per call (mmap'ed by glibc, so first-touch page faults are included);
//              BM_AddKernel runs the same kernel into a preallocated, already-touched output.
//   conv2d     x [32,64,32,32] (batch 32, 64 channels, 32x32), w [64,64,3,3], bias [64],
//              stride 1, padding 1 -> y [32,64,32,32]: GFLOP/s = 2*N*O*H*W*C*3*3 / time.
//   MLP step   784-512-512-10, batch 128, linear+relu, cross_entropy, backward, SGD momentum 0.9
//              (in-place under NoGradGuard), zero grads: ms/step. BM_MlpStepBreakdown times the
//              phases of the same step (forward / backward / update) with a steady clock.
//   layer norm the GPT's [1024,128] rows, forward and gradient kernels: GB/s of the row-sized
//              operands read and written.
//   peaks      memcpy of 64 MiB (GB/s = 2 * 64 MiB / time, read + write), and an FMA-only loop
//              (GFLOP/s with no memory traffic): the machine's ceilings for context.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

#include "ir/attrs.h"
#include "ir/op.h"
#include "lt/lt.h"
#include "runtime/buffer.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/pool_rows.h"
#include "runtime/thread_pool.h"
#include "tools/cli.h"

namespace {

constexpr double kGB = 1e9;
constexpr int64_t kAddElems = int64_t{16} << 20;  // 16M floats = 64 MiB per operand
constexpr int64_t kAddBytes = kAddElems * 4;

void set_threads(const benchmark::State& st, int arg) {
  lt::rt::set_num_threads(static_cast<int>(st.range(arg)));
}

benchmark::Counter rate(double per_iteration) {
  return benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

// --- GEMM -------------------------------------------------------------------------------------

void BM_Gemm(benchmark::State& st) {
  const int64_t n = st.range(0);
  set_threads(st, 1);
  lt::manual_seed(1);
  const lt::Tensor a = lt::randn({n, n}), b = lt::randn({n, n});
  for (auto _ : st) {
    lt::Tensor c = lt::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["GFLOP/s"] = rate(2.0 * n * n * n / kGB);
}
BENCHMARK(BM_Gemm)->ArgNames({"n", "threads"})->ArgsProduct({{512, 1024}, {1, 2}})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GemmKernel(benchmark::State& st) {
  const int64_t n = st.range(0);
  set_threads(st, 1);
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n, 0.f);
  const lt::rt::GemmArgs g{.dtype = lt::DType::F32, .m = n, .n = n, .k = n, .a = a.data(),
                           .lda = n, .b = b.data(), .ldb = n, .c = c.data(), .ldc = n};
  for (auto _ : st) {
    lt::rt::gemm(g);
    benchmark::ClobberMemory();
  }
  st.counters["GFLOP/s"] = rate(2.0 * n * n * n / kGB);
}
BENCHMARK(BM_GemmKernel)->ArgNames({"n", "threads"})->ArgsProduct({{512, 1024}, {1, 2}})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// --- elementwise add --------------------------------------------------------------------------

void BM_Add(benchmark::State& st) {
  set_threads(st, 0);
  const lt::Tensor a = lt::full({kAddElems}, 1.0), b = lt::full({kAddElems}, 2.0);
  for (auto _ : st) {
    lt::Tensor y = lt::add(a, b);
    benchmark::DoNotOptimize(y.impl());
  }
  st.counters["GB/s"] = rate(3.0 * kAddBytes / kGB);
}
BENCHMARK(BM_Add)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_AddKernel(benchmark::State& st) {
  set_threads(st, 0);
  const lt::TensorType t{lt::DType::F32, {kAddElems}};
  auto a = lt::rt::Buffer::allocate(kAddBytes), b = lt::rt::Buffer::allocate(kAddBytes),
       y = lt::rt::Buffer::allocate(kAddBytes);
  for (int64_t i = 0; i < kAddElems; ++i) {
    static_cast<float*>(a->data())[i] = 1.f;
    static_cast<float*>(b->data())[i] = 2.f;
    static_cast<float*>(y->data())[i] = 0.f;
  }
  const lt::rt::TensorRef ins[] = {{a->data(), &t}, {b->data(), &t}};
  const lt::rt::TensorRef outs[] = {{y->data(), &t}};
  for (auto _ : st) {
    lt::rt::run_kernel(lt::ir::Op::Add, lt::ir::NoAttrs{}, ins, outs);
    benchmark::ClobberMemory();
  }
  st.counters["GB/s"] = rate(3.0 * kAddBytes / kGB);
}
BENCHMARK(BM_AddKernel)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- machine peaks ----------------------------------------------------------------------------

void BM_Memcpy(benchmark::State& st) {
  set_threads(st, 0);
  std::vector<char> src(kAddBytes, 1), dst(kAddBytes, 0);
  for (auto _ : st) {
    lt::rt::parallel_for(kAddBytes, 1 << 20, [&](int64_t b, int64_t e) {
      std::memcpy(dst.data() + b, src.data() + b, static_cast<size_t>(e - b));
    });
    benchmark::ClobberMemory();
  }
  st.counters["GB/s"] = rate(2.0 * kAddBytes / kGB);
}
BENCHMARK(BM_Memcpy)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// FMA throughput with no memory traffic: 12 independent accumulators hide the FMA latency.
float fma_loop(int64_t iters) {
#if defined(__AVX512F__)
  using V = __m512;
  constexpr int kLanes = 16;
  auto set1 = [](float x) { return _mm512_set1_ps(x); };
  auto fma = [](V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); };
  auto add = [](V a, V b) { return _mm512_add_ps(a, b); };
  auto first = [](V a) { return _mm512_cvtss_f32(a); };
#elif defined(__AVX2__) && defined(__FMA__)
  using V = __m256;
  constexpr int kLanes = 8;
  auto set1 = [](float x) { return _mm256_set1_ps(x); };
  auto fma = [](V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); };
  auto add = [](V a, V b) { return _mm256_add_ps(a, b); };
  auto first = [](V a) { return _mm256_cvtss_f32(a); };
#else
  return static_cast<float>(iters);  // no SIMD FMA: the counter reads 0
#endif
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
  static_assert(kLanes > 0);
  V acc[12];
#pragma GCC unroll 12
  for (int j = 0; j < 12; ++j) acc[j] = set1(0.001f * j);
  const V m = set1(0.999999f), c = set1(1e-7f);
  for (int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = fma(acc[j], m, c);
  }
  V s = acc[0];
#pragma GCC unroll 12
  for (int j = 1; j < 12; ++j) s = add(s, acc[j]);
  return first(s);
#endif
}

constexpr int fma_lanes() {
#if defined(__AVX512F__)
  return 16;
#elif defined(__AVX2__) && defined(__FMA__)
  return 8;
#else
  return 0;
#endif
}

void BM_PeakFma(benchmark::State& st) {
  set_threads(st, 0);
  constexpr int64_t kIters = 1 << 20;
  for (auto _ : st) {
    lt::rt::parallel_for(lt::rt::num_threads(), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) benchmark::DoNotOptimize(fma_loop(kIters));
    });
  }
  st.counters["GFLOP/s"] =
      rate(2.0 * fma_lanes() * 12 * kIters * static_cast<double>(st.range(0)) / kGB);
}
BENCHMARK(BM_PeakFma)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- conv2d -----------------------------------------------------------------------------------

void BM_Conv2d(benchmark::State& st) {
  set_threads(st, 0);
  constexpr int64_t N = 32, C = 64, O = 64, H = 32, W = 32, K = 3;
  lt::manual_seed(2);
  const lt::Tensor x = lt::randn({N, C, H, W}), w = lt::randn({O, C, K, K}) * 0.05,
                   bias = lt::randn({O});
  lt::Conv2dOptions o;
  o.padding = {1, 1};
  lt::NoGradGuard no_grad;
  for (auto _ : st) {
    lt::Tensor y = lt::conv2d(x, w, bias, o);
    benchmark::DoNotOptimize(y.impl());
  }
  st.counters["GFLOP/s"] = rate(2.0 * N * O * H * W * C * K * K / kGB);
}
BENCHMARK(BM_Conv2d)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- the small CNN's pooling and convolution kernels -------------------------------------------
//
// The shapes of the CNN step (batch 64, 28x28): 2x2/stride-2 max pooling of the two convs'
// outputs, [64,32,28,28] (shape 0) and [64,64,14,14] (shape 1), with each f32 row variant the CPU
// has (rows 0 portable, 1 AVX2, 2 AVX-512: pool_rows.h; GB/s counts reading x and writing y, or
// reading x and gy and writing gx),
// and the second conv (x [64,32,14,14], w [64,32,3,3], padding 1) and its two gradients, which
// run im2col/col2im around the GEMM. The kernels run on preallocated, already-touched buffers.

/// Preallocated f32 tensors with deterministic, tie-free values, passed straight to run_kernel.
struct KernelArgs {
  std::vector<lt::TensorType> types;
  // 64-byte aligned, as the runtime's buffers are.
  std::vector<std::vector<float, lt::rt::Aligned64<float>>> data;

  void add(lt::Shape s) {
    types.push_back({lt::DType::F32, std::move(s)});
    std::vector<float, lt::rt::Aligned64<float>> v(static_cast<size_t>(types.back().numel()));
    uint32_t state = 12345u + static_cast<uint32_t>(data.size());
    for (float& f : v) {
      state = state * 1664525u + 1013904223u;
      f = static_cast<float>(state >> 8) * (1.0f / 16777216.0f) - 0.5f;
    }
    data.push_back(std::move(v));
  }
  lt::rt::TensorRef ref(size_t i) { return {data[i].data(), &types[i]}; }
  double bytes(size_t i) const { return 4.0 * static_cast<double>(types[i].numel()); }
};

/// Times run_kernel(op) with args 0..n_in-1 as inputs and the rest as the outputs.
void run_kernel_loop(benchmark::State& st, lt::ir::Op op, const lt::ir::Attrs& attrs,
                     KernelArgs& args, size_t n_in) {
  std::vector<lt::rt::TensorRef> ins, outs;
  for (size_t i = 0; i < args.types.size(); ++i) (i < n_in ? ins : outs).push_back(args.ref(i));
  for (auto _ : st) {
    lt::rt::run_kernel(op, attrs, ins, outs);
    benchmark::ClobberMemory();
  }
}

constexpr int64_t kCnnBatch = 64;

/// The CNN's two max pools: [64,32,28,28] (rows of 14 windows) for arg 0, [64,64,14,14] (7) for 1.
lt::Shape pool_input(int64_t which) {
  return which == 0 ? lt::Shape{kCnnBatch, 32, 28, 28} : lt::Shape{kCnnBatch, 64, 14, 14};
}

/// Makes the pools use row variant `index` of max_pool_rows_variants(); false (and the benchmark
/// skipped) where this CPU has no such variant.
bool use_rows(benchmark::State& st, int64_t index) {
  const auto variants = lt::rt::max_pool_rows_variants();
  if (index >= static_cast<int64_t>(variants.size())) {
    st.SkipWithError("this CPU has no such max pool row variant");
    return false;
  }
  lt::rt::use_max_pool_rows(variants[index].isa);
  st.SetLabel(variants[index].isa);
  return true;
}

void BM_MaxPool2d(benchmark::State& st) {
  set_threads(st, 2);
  if (!use_rows(st, st.range(1))) return;
  const lt::Shape x = pool_input(st.range(0));
  KernelArgs args;
  args.add(x);
  args.add({x[0], x[1], x[2] / 2, x[3] / 2});
  run_kernel_loop(st, lt::ir::Op::MaxPool2d, lt::ir::PoolAttrs{}, args, 1);
  st.counters["GB/s"] = rate((args.bytes(0) + args.bytes(1)) / kGB);
  lt::rt::use_max_pool_rows(lt::rt::max_pool_rows_variants().back().isa);
}
BENCHMARK(BM_MaxPool2d)->ArgNames({"shape", "rows", "threads"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();

// --- layer norm ---------------------------------------------------------------------------

/// Softmax over the last axis at the GPT step's shapes: attention probabilities [16,4,64,64]
/// (rows of 64) and the vocabulary's [1024,256]. GB/s of the input and the output.
void BM_Softmax(benchmark::State& st) {
  set_threads(st, 1);
  const bool vocab = st.range(0) == 1;
  KernelArgs args;
  const lt::Shape x = vocab ? lt::Shape{1024, 256} : lt::Shape{16, 4, 64, 64};
  args.add(x);
  args.add(x);
  run_kernel_loop(st, lt::ir::Op::Softmax, lt::ir::AxisAttrs{static_cast<int64_t>(x.size()) - 1},
                  args, 1);
  st.counters["GB/s"] = rate(2 * args.bytes(0) / kGB);
  st.SetLabel(vocab ? "softmax [1024,256]" : "softmax [16,4,64,64]");
}
BENCHMARK(BM_Softmax)->ArgNames({"vocab", "threads"})->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

/// Layer norm over the GPT's rows (lt_bench_step: 16 x 64 rows of 128) forward, and its
/// gradient (x, gamma, mean, rstd, gy) -> (dx, dgamma, dbeta): GB/s of the row-sized operands.
void BM_LayerNorm(benchmark::State& st) {
  set_threads(st, 1);
  const bool grad = st.range(0) == 1;
  KernelArgs args;
  const lt::Shape x{1024, 128}, g{128}, stats{1024};
  for (const lt::Shape& s : grad ? std::vector<lt::Shape>{x, g, stats, stats, x, x, g, g}
                                 : std::vector<lt::Shape>{x, g, g, x, stats, stats})
    args.add(s);
  if (grad) {  // rstd of 1 + |u|: positive, as layer_norm makes it
    for (float& v : args.data[3]) v = 1.0f + std::abs(v);
    run_kernel_loop(st, lt::ir::Op::LayerNormGrad, lt::ir::NoAttrs{}, args, 5);
  } else {
    run_kernel_loop(st, lt::ir::Op::LayerNorm, lt::ir::NormAttrs{1e-5}, args, 3);
  }
  st.counters["GB/s"] = rate((grad ? 3 : 2) * args.bytes(0) / kGB);
  st.SetLabel(grad ? "layer_norm_grad" : "layer_norm");
}
BENCHMARK(BM_LayerNorm)->ArgNames({"grad", "threads"})->ArgsProduct({{0, 1}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

// --- batch norm ---------------------------------------------------------------------------

/// Batch norm over the ResNet-20's first or last stage at lt_bench_step's batch ([32,16,32,32] or
/// [32,64,8,8], or the same channels-last with channel axis 3) forward (x, gamma, beta, running
/// mean and var -> y, mean, invstd, running mean and var), and its gradient (x, gamma, mean,
/// invstd, gy -> dx, dgamma, dbeta): GB/s of the x-sized operands. narrow 1 (2): x is bf16
/// (f16), read widened, as a compiled autocast step hands it over.
void BM_BatchNorm(benchmark::State& st) {
  set_threads(st, 3);
  const bool grad = st.range(0) == 1, last = st.range(1) == 1, narrow = st.range(4) != 0;
  const int64_t axis = last ? 3 : 1;
  // The first stage's [32,16,32,32], or (channels 64) the last stage's [32,64,8,8].
  const int64_t ch = st.range(2), hw = ch == 16 ? 32 : 8;
  KernelArgs args;
  const lt::Shape x = last ? lt::Shape{32, hw, hw, ch} : lt::Shape{32, ch, hw, hw}, c{ch};
  for (const lt::Shape& s : grad ? std::vector<lt::Shape>{x, c, c, c, x, x, c, c}
                                 : std::vector<lt::Shape>{x, c, c, c, c, x, c, c, c, c})
    args.add(s);
  if (narrow) {  // x's values rounded to bf16 or f16, packed at the front of its buffer
    float* f = args.data[0].data();
    auto* h = reinterpret_cast<uint16_t*>(f);
    for (int64_t i = 0; i < args.types[0].numel(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, f + i, sizeof bits);
      if (st.range(4) == 2) {
        const _Float16 v = static_cast<_Float16>(f[i]);
        std::memcpy(&h[i], &v, sizeof v);
      } else {
        h[i] = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
      }
    }
    args.types[0].dtype = st.range(4) == 2 ? lt::DType::F16 : lt::DType::BF16;
  }
  if (grad) {  // invstd positive, as batch_norm makes it
    for (float& v : args.data[3]) v = 1.0f + std::abs(v);
    run_kernel_loop(st, lt::ir::Op::BatchNormGrad, lt::ir::BatchNormGradAttrs{axis}, args, 5);
  } else {  // running variance positive
    for (float& v : args.data[4]) v = 1.0f + std::abs(v);
    run_kernel_loop(st, lt::ir::Op::BatchNorm, lt::ir::BatchNormAttrs{1e-5, 0.1, axis}, args, 5);
  }
  st.counters["GB/s"] = rate((grad ? 3 : 2) * args.bytes(0) / kGB);
  st.SetLabel(grad ? "batch_norm_grad" : "batch_norm");
}
BENCHMARK(BM_BatchNorm)->ArgNames({"grad", "channels_last", "channels", "threads", "narrow"})
    ->ArgsProduct({{0, 1}, {0, 1}, {16, 64}, {1, 2}, {0, 1, 2}})->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_MaxPool2dGrad(benchmark::State& st) {
  set_threads(st, 2);
  if (!use_rows(st, st.range(1))) return;
  const lt::Shape x = pool_input(st.range(0));
  KernelArgs args;
  args.add(x);                                 // x
  args.add({x[0], x[1], x[2] / 2, x[3] / 2});  // gy
  args.add(x);                                 // gx
  run_kernel_loop(st, lt::ir::Op::MaxPool2dGrad, lt::ir::PoolAttrs{}, args, 2);
  st.counters["GB/s"] = rate((args.bytes(0) + args.bytes(1) + args.bytes(2)) / kGB);
  lt::rt::use_max_pool_rows(lt::rt::max_pool_rows_variants().back().isa);
}
BENCHMARK(BM_MaxPool2dGrad)->ArgNames({"shape", "rows", "threads"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();

/// The same pools channels-last ([64,28,28,32], [64,14,14,64]), as lazy mode runs them between
/// channels-last convolutions: forward (grad 0) or gradient (1).
void BM_MaxPool2dChannelsLast(benchmark::State& st) {
  set_threads(st, 2);
  const bool grad = st.range(1) == 1;
  const lt::Shape nchw = pool_input(st.range(0));
  const lt::Shape x{nchw[0], nchw[2], nchw[3], nchw[1]}, y{x[0], x[1] / 2, x[2] / 2, x[3]};
  lt::ir::PoolAttrs a;
  a.channels_last = true;
  KernelArgs args;
  args.add(x);
  args.add(y);
  if (grad) args.add(x);
  run_kernel_loop(st, grad ? lt::ir::Op::MaxPool2dGrad : lt::ir::Op::MaxPool2d, a, args,
                  grad ? 2 : 1);
  st.counters["GB/s"] = rate((args.bytes(0) * (grad ? 2 : 1) + args.bytes(1)) / kGB);
  st.SetLabel(grad ? "max_pool2d_grad channels-last" : "max_pool2d channels-last");
}
BENCHMARK(BM_MaxPool2dChannelsLast)->ArgNames({"shape", "grad", "threads"})
    ->ArgsProduct({{0, 1}, {0, 1}, {1, 2}})->Unit(benchmark::kMicrosecond)->UseRealTime();

lt::ir::ConvAttrs cnn_conv_attrs(lt::Shape grad_shape) {
  lt::ir::ConvAttrs a;
  a.padding = {1, 1};
  a.grad_shape = std::move(grad_shape);
  return a;
}

// Arg 0 picks the layer: 1 is x [64,1,28,28] * w [32,1,3,3], 2 is x [64,32,14,14] * w [64,32,3,3].
struct CnnConvShapes {
  lt::Shape x, w, y;
  explicit CnnConvShapes(int64_t layer)
      : x(layer == 1 ? lt::Shape{kCnnBatch, 1, 28, 28} : lt::Shape{kCnnBatch, 32, 14, 14}),
        w(layer == 1 ? lt::Shape{32, 1, 3, 3} : lt::Shape{64, 32, 3, 3}),
        y(layer == 1 ? lt::Shape{kCnnBatch, 32, 28, 28} : lt::Shape{kCnnBatch, 64, 14, 14}) {}
};

void BM_CnnConv(benchmark::State& st) {
  set_threads(st, 1);
  const CnnConvShapes s(st.range(0));
  KernelArgs args;
  args.add(s.x);
  args.add(s.w);
  args.add(s.y);
  run_kernel_loop(st, lt::ir::Op::Conv2d, cnn_conv_attrs({}), args, 2);
}
BENCHMARK(BM_CnnConv)->ArgNames({"layer", "threads"})->ArgsProduct({{1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_CnnConvInputGrad(benchmark::State& st) {
  set_threads(st, 1);
  const CnnConvShapes s(st.range(0));
  KernelArgs args;
  args.add(s.y);  // gy
  args.add(s.w);
  args.add(s.x);  // gx
  run_kernel_loop(st, lt::ir::Op::Conv2dInputGrad, cnn_conv_attrs(s.x), args, 2);
}
BENCHMARK(BM_CnnConvInputGrad)->ArgNames({"layer", "threads"})->ArgsProduct({{1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_CnnConvWeightGrad(benchmark::State& st) {
  set_threads(st, 1);
  const CnnConvShapes s(st.range(0));
  KernelArgs args;
  args.add(s.x);
  args.add(s.y);  // gy
  args.add(s.w);  // gw
  run_kernel_loop(st, lt::ir::Op::Conv2dWeightGrad, cnn_conv_attrs(s.w), args, 2);
}
BENCHMARK(BM_CnnConvWeightGrad)->ArgNames({"layer", "threads"})->ArgsProduct({{1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

// --- one eager MLP training step --------------------------------------------------------------

struct Mlp {
  static constexpr int64_t kBatch = 128;
  std::vector<lt::Tensor> params, momentum;
  lt::Tensor x, labels;

  Mlp() {
    lt::manual_seed(3);
    const int64_t sizes[] = {784, 512, 512, 10};
    for (int l = 0; l < 3; ++l) {
      const double scale = 1.0 / std::sqrt(static_cast<double>(sizes[l]));
      params.push_back(lt::randn({sizes[l + 1], sizes[l]}) * scale);
      params.push_back(lt::zeros({sizes[l + 1]}));
    }
    for (lt::Tensor& p : params) {
      p.requires_grad_();
      momentum.push_back(lt::zeros_like(p));
    }
    x = lt::randn({kBatch, 784});
    std::vector<int64_t> y(kBatch);
    for (int64_t i = 0; i < kBatch; ++i) y[i] = (i * 7) % 10;
    labels = lt::from_vector(y, {kBatch});
  }

  lt::Tensor forward() const {
    lt::Tensor h = lt::relu(lt::linear(x, params[0], params[1]));
    h = lt::relu(lt::linear(h, params[2], params[3]));
    return lt::cross_entropy(lt::linear(h, params[4], params[5]), labels);
  }

  void update(double lr = 0.01, double mu = 0.9) {
    lt::NoGradGuard no_grad;
    for (size_t i = 0; i < params.size(); ++i) {
      momentum[i].mul_(mu);
      momentum[i].add_(params[i].grad());
      params[i].sub_(momentum[i] * lr);
      params[i].zero_grad();
    }
  }

  void step() {
    lt::Tensor loss = forward();
    loss.backward();
    update();
  }
};

void BM_MlpStep(benchmark::State& st) {
  set_threads(st, 0);
  Mlp m;
  for (int i = 0; i < 3; ++i) m.step();  // warm the allocator and the pool
  for (auto _ : st) m.step();
  st.counters["ms/step"] = benchmark::Counter(
      1e-3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_MlpStep)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_MlpStepBreakdown(benchmark::State& st) {
  set_threads(st, 0);
  using Clock = std::chrono::steady_clock;
  Mlp m;
  for (int i = 0; i < 3; ++i) m.step();
  double fwd = 0, bwd = 0, upd = 0;
  for (auto _ : st) {
    const auto t0 = Clock::now();
    lt::Tensor loss = m.forward();
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    m.update();
    const auto t3 = Clock::now();
    fwd += std::chrono::duration<double, std::milli>(t1 - t0).count();
    bwd += std::chrono::duration<double, std::milli>(t2 - t1).count();
    upd += std::chrono::duration<double, std::milli>(t3 - t2).count();
  }
  const double n = static_cast<double>(st.iterations());
  st.counters["fwd_ms"] = fwd / n;
  st.counters["bwd_ms"] = bwd / n;
  st.counters["upd_ms"] = upd / n;
}
BENCHMARK(BM_MlpStepBreakdown)->ArgNames({"threads"})->Arg(1)->Arg(2)
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// Only the nine GEMMs one eager step runs (3 forward; 2 per layer backward, as the matmul vjp
// issues them), with the step's shapes and transposes: how much of the step is GEMM. dx1_ms is
// the gradient of the network input x (layer 1's dX), which the step computes although x does not
// require grad.
void BM_MlpGemms(benchmark::State& st) {
  set_threads(st, 0);
  using Clock = std::chrono::steady_clock;
  constexpr int64_t B = Mlp::kBatch;
  lt::manual_seed(4);
  const int64_t sizes[] = {784, 512, 512, 10};
  std::vector<lt::Tensor> act, w, g;  // layer input, weight [out,in], output grad [B,out]
  for (int l = 0; l < 3; ++l) {
    act.push_back(lt::randn({B, sizes[l]}));
    w.push_back(lt::randn({sizes[l + 1], sizes[l]}));
    g.push_back(lt::randn({B, sizes[l + 1]}));
  }
  double flops = 0;
  for (int l = 0; l < 3; ++l) flops += 3 * 2.0 * B * sizes[l] * sizes[l + 1];
  double dx1 = 0;
  lt::NoGradGuard no_grad;
  for (auto _ : st) {
    for (int l = 0; l < 3; ++l)
      benchmark::DoNotOptimize(lt::matmul(act[l], w[l], false, true).impl());
    for (int l = 2; l >= 0; --l) {
      const auto t0 = Clock::now();
      lt::Tensor ga = lt::matmul(g[l], w[l], false, false);
      if (l == 0) dx1 += std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      benchmark::DoNotOptimize(ga.impl());
      benchmark::DoNotOptimize(lt::matmul(g[l], act[l], true, false).impl());
    }
  }
  st.counters["GFLOP/s"] = rate(flops / kGB);
  st.counters["ms"] = benchmark::Counter(
      1e-3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  st.counters["dx1_ms"] = dx1 / static_cast<double>(st.iterations());
}
BENCHMARK(BM_MlpGemms)->ArgNames({"threads"})->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// --- broadcasting elementwise kernels ---------------------------------------------------------
//
// The elementwise ops of the eager CNN and MLP steps that have a scalar or broadcast operand, run
// on preallocated, already-touched buffers (arg 0 picks the case; the label names it). GB/s counts
// every operand read once and the output written once.
//   0 where_scalar   relu backward of conv1: where(mask bool [64,32,28,28], g f32, 0-d f32)
//   1 mul_scalar_r   [64,32,28,28] * 0-d (SGD's v * 0.9)
//   2 mul_scalar_l   0-d * [64,32,28,28] (SGD's lr * v)
//   3 gt_scalar      [64,32,28,28] > 0-d -> bool (relu's mask)
//   4 bias_channel   [64,32,28,28] + [1,32,1,1] (conv bias)
//   5 bias_row       [128,512] + [512] (linear bias)
//   6 col_shift      [128,10] - [128,1] (softmax's max shift)
//   7 same_small     [128,512] + [128,512] (cache-resident: thread-split overhead shows)
//   8 where_full     where(mask [128,512], g [128,512], h [128,512])

struct EwCase {
  const char* name;
  lt::ir::Op op;
  std::vector<lt::TensorType> ins;
  lt::TensorType out;
};

EwCase ew_case(int64_t i) {
  using lt::DType;
  using lt::ir::Op;
  const lt::Shape act{kCnnBatch, 32, 28, 28};
  const lt::TensorType f_act{DType::F32, act}, b_act{DType::Bool, act}, f0{DType::F32, {}};
  const lt::TensorType f_mlp{DType::F32, {128, 512}};
  switch (i) {
    case 0: return {"where_scalar", Op::Where, {b_act, f_act, f0}, f_act};
    case 1: return {"mul_scalar_r", Op::Mul, {f_act, f0}, f_act};
    case 2: return {"mul_scalar_l", Op::Mul, {f0, f_act}, f_act};
    case 3: return {"gt_scalar", Op::Gt, {f_act, f0}, b_act};
    case 4: return {"bias_channel", Op::Add, {f_act, {DType::F32, {1, 32, 1, 1}}}, f_act};
    case 5: return {"bias_row", Op::Add, {f_mlp, {DType::F32, {512}}}, f_mlp};
    case 6: return {"col_shift", Op::Sub, {{DType::F32, {128, 10}}, {DType::F32, {128, 1}}},
                    {DType::F32, {128, 10}}};
    case 7: return {"same_small", Op::Add, {f_mlp, f_mlp}, f_mlp};
    default: return {"where_full", Op::Where, {{DType::Bool, {128, 512}}, f_mlp, f_mlp}, f_mlp};
  }
}

/// Zero-filled buffer for `t` (bool false, float 0): the kernels' speed does not depend on values.
std::shared_ptr<lt::rt::Buffer> touched_buffer(const lt::TensorType& t) {
  auto b = lt::rt::Buffer::allocate(static_cast<size_t>(t.bytes()) + 1);  // 0-d: 4 bytes
  std::memset(b->data(), 0, static_cast<size_t>(t.bytes()));
  return b;
}

void BM_EwBroadcast(benchmark::State& st) {
  set_threads(st, 1);
  const EwCase c = ew_case(st.range(0));
  std::vector<std::shared_ptr<lt::rt::Buffer>> bufs;
  std::vector<lt::rt::TensorRef> ins;
  double bytes = static_cast<double>(c.out.bytes());
  for (const lt::TensorType& t : c.ins) {
    bufs.push_back(touched_buffer(t));
    ins.push_back({bufs.back()->data(), &t});
    bytes += static_cast<double>(t.bytes());
  }
  bufs.push_back(touched_buffer(c.out));
  const lt::rt::TensorRef outs[] = {{bufs.back()->data(), &c.out}};
  for (auto _ : st) {
    lt::rt::run_kernel(c.op, lt::ir::NoAttrs{}, ins, outs);
    benchmark::ClobberMemory();
  }
  st.SetLabel(c.name);
  st.counters["GB/s"] = rate(bytes / kGB);
}
BENCHMARK(BM_EwBroadcast)->ArgNames({"case", "threads"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8}, {1, 2}})->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
