// Lazy-mode overhead: tracing cost per op, cutting + hashing a pending graph per node, and the
// cache lookup of a hit, on a 1000-op graph over tiny tensors (so execution is negligible next
// to what is measured). Targets (issue 3): trace + build + hash <= 1 us/op, lookup <= 50 us.
// BM_ResNet20StepTrace: the host time of a real training step's trace (ResNet-20 with SGD
// momentum, forward, loss, backward and update, about 550 ops) on a 1x8x8 batch of one, so
// that running it between iterations stays cheap; the run is not timed. BM_GptStepTrace: the
// same for the byte-level GPT of lt_bench_step (2 layers, d_model 128, AdamW, no dropout) on
// one sequence of 8 bytes, about 670 ops.
#include <benchmark/benchmark.h>

#include "examples/gpt_model.h"
#include "examples/resnet_model.h"
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

void BM_ResNet20StepTrace(benchmark::State& state) {
  lt::manual_seed(0);
  const lt::Tensor x = lt::randn({1, 1, 8, 8});
  const lt::Tensor y = lt::full({1}, 3, lt::DType::I64);
  auto model = std::make_shared<lt::examples::ResNet20>();
  model->train();
  lt::optim::SGD opt(model->parameters(), lt::optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  lt::ModeGuard lazy(lt::Mode::Lazy);
  auto trace_step = [&] {
    opt.zero_grad();
    lt::cross_entropy(model->forward(x), y).backward();
    opt.step();
  };
  for (int i = 0; i < 2; ++i) {  // compile, and the steps after the first differ in state
    trace_step();
    lt::mark_step();
  }
  lt::metrics::reset();
  for (auto _ : state) {
    trace_step();
    state.PauseTiming();
    lt::mark_step();
    state.ResumeTiming();
  }
  state.counters["ops/step"] =
      benchmark::Counter(static_cast<double>(lt::metrics::counter("nodes_traced")),
                         benchmark::Counter::kAvgIterations);
}

void BM_GptStepTrace(benchmark::State& state) {
  lt::manual_seed(0);
  const lt::examples::GptConfig c{.context = 8, .dropout = 0};
  const lt::Tensor x = lt::cast(lt::rand({1, c.context}) * 256.0, lt::DType::I64);
  const lt::Tensor y = lt::cast(lt::rand({c.context}) * 256.0, lt::DType::I64);
  auto model = std::make_shared<lt::examples::CharGpt>(c);
  model->train();
  lt::optim::AdamW opt(model->parameters(),
                       lt::optim::AdamWOptions{.lr = 3e-4, .weight_decay = 0.01});
  lt::ModeGuard lazy(lt::Mode::Lazy);
  auto trace_step = [&] {
    opt.zero_grad();
    lt::cross_entropy(lt::reshape(model->forward(x), {-1, c.vocab}), y).backward();
    opt.step();
  };
  for (int i = 0; i < 2; ++i) {
    trace_step();
    lt::mark_step();
  }
  lt::metrics::reset();
  for (auto _ : state) {
    trace_step();
    state.PauseTiming();
    lt::mark_step();
    state.ResumeTiming();
  }
  state.counters["ops/step"] =
      benchmark::Counter(static_cast<double>(lt::metrics::counter("nodes_traced")),
                         benchmark::Counter::kAvgIterations);
}

}  // namespace

BENCHMARK(BM_Trace)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TraceBuildHashRun)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ResNet20StepTrace)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GptStepTrace)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  benchmark::RunSpecifiedBenchmarks();
  // The split of a step, from the runtime's own timers (p50 over every step above).
  std::printf("%s", lt::metrics::report().c_str());
  return 0;
}
