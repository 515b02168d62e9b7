// bf16 against f32 GEMM at the shapes of the trainers' steps and at 1024^3, the machine's GEMM
// ceiling (docs/RESULTS.md, "Eager kernels",
// has the figures; docs/BENCHMARKS.md the command). Arguments: shape, path, threads
// (lt::rt::set_num_threads).
//
//   paths  0 f32 through the build's BLAS (OpenBLAS), 1 f32 through oneDNN, 2 bf16 x bf16 -> f32,
//          3 bf16 x bf16 -> bf16 (rt::gemm's paths, gemm_paths.h; each split over the pool).
//   GFLOP/s = 2 m n k / time. Operands are preallocated and touched; C is overwritten (beta 0).
//   cold 1 evicts the operands from the caches before each call (untimed), as a step finds them:
//   a weight gradient reads activations written long before, in the forward pass.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/gemm_paths.h"
#include "runtime/thread_pool.h"
#include "tools/cli.h"

namespace {

struct StepShape {
  const char* name;
  bool trans_a, trans_b;
  int64_t m, n, k;
};

// MLP 784-128-10 at batch 128, fmnist_cnn's convolutions per image as im2col GEMMs, char_gpt's
// projections at batch 64 x context 64 = 4096 rows and at lt_bench_step's 1024; "dW" rows are
// weight gradients.
const StepShape kShapes[] = {
    {"mlp fc1 128x784 . 784x128", false, false, 128, 128, 784},
    {"mlp fc2 128x128 . 128x10", false, false, 128, 10, 128},
    {"mlp fc1 dW 784x128^T . 128x128", true, false, 784, 128, 128},
    {"cnn conv1 w 32x9 . col 9x784", false, false, 32, 784, 9},
    {"cnn conv2 w 64x288 . col 288x196", false, false, 64, 196, 288},
    {"cnn conv2 dW gy 64x196 . col^T", false, true, 64, 288, 196},
    {"gpt up 4096x128 . 128x512", false, false, 4096, 512, 128},
    {"gpt down 4096x512 . 512x128", false, false, 4096, 128, 512},
    {"gpt vocab 4096x128 . 128x256", false, false, 4096, 256, 128},
    {"gpt up dW 4096x128^T . 4096x512", true, false, 128, 512, 4096},
    // lt_bench_step's GPT (batch 16 x context 64 = 1024 rows), weights stored [out, in]
    {"gpt step up 1024x128 . (512x128)^T", false, true, 1024, 512, 128},
    {"gpt step up dW (1024x512)^T . 1024x128", true, false, 512, 128, 1024},
    {"gpt step down dW (1024x128)^T . 1024x512", true, false, 128, 512, 1024},
    {"gpt step up dX 1024x512 . 512x128", false, false, 1024, 128, 512},
    // The core's ceiling: large enough that packing and edges cost nothing.
    {"peak 1024x1024 . 1024x1024", false, false, 1024, 1024, 1024},
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

const char* const kPaths[] = {"f32 blas", "f32 onednn", "bf16->f32", "bf16->bf16"};

void BM_StepGemm(benchmark::State& st) {
  const StepShape& s = kShapes[st.range(0)];
  const int path = static_cast<int>(st.range(1));
  lt::rt::set_num_threads(static_cast<int>(st.range(2)));
  const bool bf16_in = path >= 2;
  const lt::DType in = bf16_in ? lt::DType::BF16 : lt::DType::F32;
  const lt::DType out = path == 3 ? lt::DType::BF16 : lt::DType::F32;
  // 0.5 and 0.25 in either dtype (bf16 is the high half of the f32 bits).
  std::vector<float> a32(s.m * s.k, 0.5f), b32(s.k * s.n, 0.25f), c32(s.m * s.n, 0.f);
  std::vector<uint16_t> a16(s.m * s.k, 0x3f00), b16(s.k * s.n, 0x3e80), c16(s.m * s.n, 0);
  const lt::rt::GemmArgs g{
      .dtype = in, .trans_a = s.trans_a, .trans_b = s.trans_b, .m = s.m, .n = s.n, .k = s.k,
      .a = bf16_in ? static_cast<const void*>(a16.data()) : a32.data(),
      .lda = s.trans_a ? s.m : s.k,
      .b = bf16_in ? static_cast<const void*>(b16.data()) : b32.data(),
      .ldb = s.trans_b ? s.k : s.n,
      .c = out == lt::DType::BF16 ? static_cast<void*>(c16.data()) : c32.data(), .ldc = s.n,
      .c_dtype = out};
  auto run = [&] {
    if (path == 0) lt::rt::gemm_blas(g);
    else if (path == 1) lt::rt::gemm_onednn(g);
    else lt::rt::gemm(g);
  };
  const bool cold = st.range(3) != 0;
  std::vector<char> evict(cold ? 64 << 20 : 0);
  run();  // creates the oneDNN primitives outside the timing
  for (auto _ : st) {
    if (cold) {
      st.PauseTiming();
      for (size_t i = 0; i < evict.size(); i += 64) evict[i] = static_cast<char>(evict[i] + 1);
      benchmark::DoNotOptimize(evict.data());
      st.ResumeTiming();
    }
    run();
    benchmark::ClobberMemory();
  }
  st.SetLabel(std::string(s.name) + ", " + kPaths[path]);
  st.counters["GFLOP/s"] = benchmark::Counter(2.0 * s.m * s.n * s.k / 1e9,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StepGemm)->ArgNames({"shape", "path", "threads", "cold"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, kNumShapes - 1, 1), {0, 1, 2, 3}, {1, 2}, {0, 1}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  std::printf("gemm backend: %s; bf16: %s\n", lt::rt::gemm_backend(),
              lt::rt::gemm_bf16_backend());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
