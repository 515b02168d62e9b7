// Lazy-mode overhead: tracing cost per op, cutting + hashing a pending graph per node, and the
// cache lookup of a hit, on a 1000-op graph over tiny tensors (so execution is negligible next
// to what is measured). Targets (issue 3): trace + build + hash <= 1 us/op, lookup <= 50 us.
#include <benchmark/benchmark.h>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tools/cli.h"

namespace {

constexpr int kOps = 1000;

/// 1000 elementwise ops over a [4] tensor and a few parameters, as a training step would trace.
lt::Tensor trace_chain(const lt::Tensor& x, const lt::Tensor& w) {
  lt::Tensor h = x;
  for (int i = 0; i < kOps / 4; ++i) h = lt::tanh(h * w + x) - w;
  return h;
}

void BM_Trace(benchmark::State& state) {
  const lt::Tensor x = lt::ones({4}), w = lt::full({4}, 0.5);
  lt::ModeGuard lazy(lt::Mode::Lazy);
  for (auto _ : state) {
    lt::Tensor y = trace_chain(x, w);
    benchmark::DoNotOptimize(y);
  }
  // Seconds per traced op, printed with an SI prefix (e.g. "430n" is 430 ns).
  state.counters["s/op"] =
      benchmark::Counter(kOps, benchmark::Counter::kIsIterationInvariantRate |
                                   benchmark::Counter::kInvert);
}

/// Trace + cut + hash + cache hit + run (tiny), and the metrics' split of the step.
void BM_TraceBuildHashRun(benchmark::State& state) {
  const lt::Tensor x = lt::ones({4}), w = lt::full({4}, 0.5);
  lt::ModeGuard lazy(lt::Mode::Lazy);
  { lt::Tensor warm = trace_chain(x, w); lt::mark_step(); }
  lt::metrics::reset();
  for (auto _ : state) {
    lt::Tensor y = trace_chain(x, w);
    lt::mark_step();
    benchmark::DoNotOptimize(y);
  }
  // Cache hits per step: 1 when every timed step reused the compiled graph.
  state.counters["hits/step"] =
      benchmark::Counter(static_cast<double>(lt::metrics::counter("cache_hit")),
                         benchmark::Counter::kAvgIterations);
}

}  // namespace

BENCHMARK(BM_Trace)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TraceBuildHashRun)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  benchmark::RunSpecifiedBenchmarks();
  // The split of a step, from the runtime's own timers (p50 over every step above).
  std::printf("%s", lt::metrics::report().c_str());
  return 0;
}
