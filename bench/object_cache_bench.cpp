// What a compiled step's code costs the JIT: an empty Jit, a small module compiled at O3 and
// written to the disk cache (a miss), and the same module loaded from the cache (a hit), each
// with Jit::create, add_module and lookup. The module is the codegen tests' saxpy loop; every
// iteration checks what it computes, untimed.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/jit.h"
#include "codegen/object_cache.h"
#include "tests/unit/codegen/test_modules.h"
#include "tools/cli.h"

namespace {

namespace fs = std::filesystem;
using lt::codegen::Jit;

/// The cache folder of this run, removed at exit.
const fs::path& cache_dir() {
  static const fs::path dir =
      fs::temp_directory_path() / ("lt_bench_object_cache_" + std::to_string(::getpid()));
  return dir;
}

/// A Jit caching in `dir` (none when empty) with saxpy added under `key`, looked up.
std::unique_ptr<Jit> saxpy_jit(const std::string& dir, const std::string& key,
                               lt::codegen::testing::SaxpyFn* fn) {
  std::unique_ptr<Jit> jit = Jit::create(dir);
  lt::codegen::testing::TestModule tm(*jit);
  lt::codegen::testing::add_saxpy(*tm.m);
  lt::codegen::JitOptions o;
  o.cache_key = key;
  o.opt_level = 3;
  tm.add_to(*jit, o);
  *fn = reinterpret_cast<lt::codegen::testing::SaxpyFn>(jit->lookup("saxpy"));
  return jit;
}

/// Whether fn computes y = 3 x + y.
bool saxpy_works(lt::codegen::testing::SaxpyFn fn) {
  std::vector<float> x(1003, 2.0f), y(1003, 1.0f);
  fn(x.data(), y.data(), 3.0f, 1003);
  for (float v : y)
    if (v != 7.0f) return false;
  return true;
}

void BM_JitCreate(benchmark::State& state) {
  for (auto _ : state) {
    std::unique_ptr<Jit> jit = Jit::create();
    benchmark::DoNotOptimize(jit.get());
  }
}

/// A new key each iteration: optimization, codegen and the cache entry's write.
void BM_CompileMiss(benchmark::State& state) {
  const lt::codegen::ObjectCacheStats before = lt::codegen::object_cache_stats();
  static int64_t n = 0;  // across the runs benchmark makes of this function: never a key again
  for (auto _ : state) {
    lt::codegen::testing::SaxpyFn fn = nullptr;
    std::unique_ptr<Jit> jit = saxpy_jit(cache_dir().string(), "miss" + std::to_string(n++), &fn);
    state.PauseTiming();
    if (!saxpy_works(fn)) state.SkipWithError("saxpy computed a wrong result");
    jit.reset();
    state.ResumeTiming();
  }
  // 1 when every iteration compiled and wrote its entry.
  state.counters["writes/iter"] = benchmark::Counter(
      static_cast<double>(lt::codegen::object_cache_stats().writes - before.writes),
      benchmark::Counter::kAvgIterations);
}

/// One key, written before the timed loop: every iteration loads the object from disk.
void BM_DiskCacheHit(benchmark::State& state) {
  lt::codegen::testing::SaxpyFn fn = nullptr;
  saxpy_jit(cache_dir().string(), "hit", &fn);
  const lt::codegen::ObjectCacheStats before = lt::codegen::object_cache_stats();
  for (auto _ : state) {
    std::unique_ptr<Jit> jit = saxpy_jit(cache_dir().string(), "hit", &fn);
    state.PauseTiming();
    if (!saxpy_works(fn)) state.SkipWithError("saxpy computed a wrong result");
    jit.reset();
    state.ResumeTiming();
  }
  // 1 when every iteration hit the cache.
  state.counters["hits/iter"] =
      benchmark::Counter(static_cast<double>(lt::codegen::object_cache_stats().hits - before.hits),
                         benchmark::Counter::kAvgIterations);
}

BENCHMARK(BM_JitCreate)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileMiss)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DiskCacheHit)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  {
    // LLVM's one-time initialization, outside every timing.
    lt::codegen::testing::SaxpyFn fn = nullptr;
    saxpy_jit("", "", &fn);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove_all(cache_dir());
  return 0;
}
