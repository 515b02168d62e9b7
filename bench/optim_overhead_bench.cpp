// What lt::optim costs over an update written by hand, in one binary on the same engine, so the
// two can run interleaved (--benchmark_enable_random_interleaving) on a machine whose speed
// drifts. The hand-written update is the one the example trainers had before the library:
// SGD with PyTorch's momentum rule, v = 0.9 v + g; p -= 0.01 v, its buffers made at the first
// step and its numbers constants of the graph. The library's SGD with the same options keeps
// lr and the step count as 0-d tensors and chooses the first-step rule in the graph.
// BM_Step: a whole training step (forward, loss, backward, update; + mark_step in lazy mode).
// BM_Update: the update alone over fixed gradients, where the optimizer is all that is timed.
// Args: model (0 MLP 784-512-512-10 b128, 1 CNN b64), optimizer (0 by hand, 1 lt::optim),
// mode (0 eager, 1 lazy). Threads: LT_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "examples/cnn_model.h"
#include "examples/mlp_model.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"
#include "tools/cli.h"

namespace {

constexpr double kLr = 0.01, kMomentum = 0.9;

/// The floor the library is measured against: nothing but the update's arithmetic.
class HandSgd {
 public:
  explicit HandSgd(std::vector<lt::Tensor> params)
      : params_(std::move(params)), velocity_(params_.size()) {}

  void zero_grad() {
    for (lt::Tensor& p : params_) p.zero_grad();
  }

  void step() {
    lt::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      const lt::Tensor g = params_[i].grad();
      if (!g.defined()) continue;
      if (!velocity_[i].defined()) velocity_[i] = lt::zeros_like(g);
      velocity_[i].mul_(kMomentum).add_(g);
      params_[i].sub_(velocity_[i] * kLr);
    }
  }

 private:
  std::vector<lt::Tensor> params_, velocity_;
};

/// One model, its batch and one of the two optimizers behind the same two calls.
struct Setup {
  std::shared_ptr<lt::nn::Module> model;
  lt::Tensor x, y;
  std::unique_ptr<HandSgd> hand;
  std::unique_ptr<lt::optim::SGD> library;

  Setup(int64_t which_model, bool use_library) {
    lt::manual_seed(0);
    const int64_t n = which_model == 0 ? 128 : 64;
    x = which_model == 0 ? lt::randn({n, 784}) : lt::randn({n, 1, 28, 28});
    y = lt::cast(lt::rand({n}) * 10.0, lt::DType::I64);
    if (which_model == 0)
      model = std::make_shared<lt::examples::Mlp>(std::vector<int64_t>{784, 512, 512, 10});
    else
      model = std::make_shared<lt::examples::Cnn>();
    model->train();
    if (use_library)
      library = std::make_unique<lt::optim::SGD>(
          model->parameters(), lt::optim::SGDOptions{.lr = kLr, .momentum = kMomentum});
    else
      hand = std::make_unique<HandSgd>(model->parameters());
  }

  lt::Tensor forward() {
    if (auto* mlp = dynamic_cast<lt::examples::Mlp*>(model.get())) return mlp->forward(x);
    return static_cast<lt::examples::Cnn*>(model.get())->forward(x);
  }
  void zero_grad() { library ? library->zero_grad() : hand->zero_grad(); }
  void step() { library ? library->step() : hand->step(); }
  void backward() { lt::cross_entropy(forward(), y).backward(); }
};

void set_label(benchmark::State& state) {
  state.SetLabel(std::string(state.range(0) == 0 ? "mlp" : "cnn") + " " +
                 (state.range(1) == 0 ? "by-hand" : "lt::optim") + " " +
                 (state.range(2) == 0 ? "eager" : "lazy"));
}

/// Ops traced per step (lazy) and the host time spent tracing and cutting + hashing them.
void trace_counters(benchmark::State& state, double trace_ns) {
  if (state.range(2) == 0) return;
  state.counters["ops/step"] =
      benchmark::Counter(static_cast<double>(lt::metrics::counter("nodes_traced")),
                         benchmark::Counter::kAvgIterations);
  state.counters["trace+hash us"] = benchmark::Counter(
      (trace_ns + static_cast<double>(lt::metrics::total_ns("build_and_hash"))) / 1e3,
      benchmark::Counter::kAvgIterations);
}

void BM_Step(benchmark::State& state) {
  Setup s(state.range(0), state.range(1) == 1);
  const bool lazy = state.range(2) == 1;
  lt::ModeGuard mode(lazy ? lt::Mode::Lazy : lt::Mode::Eager);
  double trace_ns = 0;
  auto step = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    s.zero_grad();
    s.backward();
    s.step();
    trace_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (lazy) lt::mark_step();
  };
  for (int i = 0; i < 3; ++i) step();  // compiles, and the hand-written buffers appear at step 1
  lt::metrics::reset();
  trace_ns = 0;
  for (auto _ : state) step();
  trace_counters(state, trace_ns);
  set_label(state);
}

void BM_Update(benchmark::State& state) {
  Setup s(state.range(0), state.range(1) == 1);
  s.backward();  // eager gradients, kept for every update below
  const bool lazy = state.range(2) == 1;
  lt::ModeGuard mode(lazy ? lt::Mode::Lazy : lt::Mode::Eager);
  double trace_ns = 0;
  auto step = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    s.step();
    trace_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0)
                    .count();
    if (lazy) lt::mark_step();
  };
  for (int i = 0; i < 3; ++i) step();
  lt::metrics::reset();
  trace_ns = 0;
  for (auto _ : state) step();
  trace_counters(state, trace_ns);
  set_label(state);
}

}  // namespace

BENCHMARK(BM_Step)
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})
    ->ArgNames({"model", "optimizer", "mode"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Update)
    ->ArgsProduct({{0, 1}, {0, 1}, {0, 1}})
    ->ArgNames({"model", "optimizer", "mode"})
    ->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return lt::cli::kExitBadInput;
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
