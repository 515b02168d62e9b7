// Training-step benchmark, one run, printing ratios: eager vs lazy (compiled) at 1 and 2
// threads for the four example models with the batch sizes and optimizers of
// bench/torch_compare.py: the MLP 784-512-512-10 (batch 128), the small CNN (batch 64, 28x28) and
// ResNet-20 (batch 32, 1x32x32) with SGD momentum 0.9, and the byte-level GPT (no dropout, batch
// 16 x context 64) with AdamW (3e-4, weight decay 0.01 on every parameter); cold compile time
// (empty disk cache), warm start (objects from the disk cache, empty in-memory cache), peak
// memory, and the host time a lazy step spends tracing and cutting + hashing (what a cache hit
// costs besides running the graph).
// Usage: lt_bench_step [steps] [mlp|cnn|resnet|gpt|all] [eager|lazy|both] [f32|bf16]: with eager
// or lazy, only that mode runs, at LT_NUM_THREADS threads (for profilers); bf16 runs forward and
// loss under lt::AutocastGuard (bf16), as torch.autocast("cpu", dtype=torch.bfloat16) does in
// bench/torch_compare.py --bf16.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "examples/cnn_model.h"
#include "examples/gpt_model.h"
#include "examples/mlp_model.h"
#include "examples/resnet_model.h"
#include "lt/autocast.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/options.h"
#include "tools/cli.h"

namespace {

using namespace lt;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

/// A model in training mode, its optimizer and the step's loss.
struct Trainee {
  std::shared_ptr<nn::Module> model;
  std::unique_ptr<optim::Optimizer> opt;
  std::function<Tensor(const Tensor& x, const Tensor& y)> loss;
};

struct Workload {
  std::string name;
  std::function<Trainee()> make;  // fresh model and optimizer, same seed
  Tensor x, y;
};

/// Trainee of a classifier `model` (forward(x) -> logits [N, C]) with SGD momentum 0.9.
template <class M>
Trainee classifier(std::shared_ptr<M> model) {
  Trainee t;
  t.opt = std::make_unique<optim::SGD>(model->parameters(),
                                       optim::SGDOptions{.lr = 0.01, .momentum = 0.9});
  t.loss = [m = model.get()](const Tensor& x, const Tensor& y) {
    return cross_entropy(m->forward(x), y);
  };
  t.model = std::move(model);
  return t;
}

struct Phase {
  double first_ms = 0, second_ms = 0, steady_ms = 0, peak_mb = 0;
  double trace_us = 0;  ///< lazy: host time per steady step tracing it and cutting + hashing it
  double ops = 0;       ///< lazy: ops traced per steady step
};

/// Forward and loss under bf16 autocast (the "bf16" argument).
bool g_bf16 = false;

/// Runs `steps` timed steps after two untimed-but-recorded first steps.
Phase run(const Workload& w, Mode mode, int steps) {
  manual_seed(1);
  Trainee trainee = w.make();
  trainee.model->train();
  reset_peak_memory();
  ModeGuard guard(mode);
  double trace_ns = 0;
  auto step = [&] {
    const auto t0 = Clock::now();
    trainee.opt->zero_grad();
    Tensor loss;
    {
      AutocastGuard autocast(DType::BF16, g_bf16);
      loss = trainee.loss(w.x, w.y);
    }
    loss.backward();
    trainee.opt->step();
    trace_ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    if (mode == Mode::Lazy) mark_step();
  };
  Phase p;
  auto t = Clock::now();
  step();
  p.first_ms = ms_since(t);
  t = Clock::now();
  step();
  p.second_ms = ms_since(t);
  t = Clock::now();
  trace_ns = 0;
  const int64_t hash_ns0 = metrics::total_ns("build_and_hash");
  const int64_t ops0 = metrics::counter("nodes_traced");
  for (int i = 0; i < steps; ++i) step();
  p.steady_ms = ms_since(t) / steps;
  if (mode == Mode::Lazy && steps > 0) {
    p.trace_us =
        (trace_ns + static_cast<double>(metrics::total_ns("build_and_hash") - hash_ns0)) / 1e3 /
        steps;
    p.ops = static_cast<double>(metrics::counter("nodes_traced") - ops0) / steps;
  }
  p.peak_mb = static_cast<double>(memory_stats().peak_bytes) / (1 << 20);
  return p;
}

/// A classifier M(args...) on random inputs of `shape` with labels of 10 classes.
template <class M, class... Args>
Workload classifier_workload(std::string name, Shape shape, Args... args) {
  manual_seed(0);
  const int64_t n = shape[0];
  Workload w{std::move(name), nullptr, randn(shape), cast(rand({n}) * 10.0, DType::I64)};
  w.make = [args...] { return classifier(std::make_shared<M>(args...)); };
  return w;
}

Workload gpt() {
  manual_seed(0);
  const examples::GptConfig c{.dropout = 0};
  Workload w{"gpt 2x128 ctx64 b16", nullptr, cast(rand({16, c.context}) * 256.0, DType::I64),
             cast(rand({16 * c.context}) * 256.0, DType::I64)};
  w.make = [c] {
    auto model = std::make_shared<examples::CharGpt>(c);
    Trainee t;
    t.opt = std::make_unique<optim::AdamW>(model->parameters(),
                                           optim::AdamWOptions{.lr = 3e-4, .weight_decay = 0.01});
    t.loss = [m = model.get(), vocab = c.vocab](const Tensor& x, const Tensor& y) {
      return cross_entropy(reshape(m->forward(x), {-1, vocab}), y);
    };
    t.model = std::move(model);
    return t;
  };
  return w;
}

void bench(int steps, const std::string& which, const std::string& only) {
  // A private, empty disk cache: the first lazy run compiles cold, a later one starts warm.
  const auto cache =
      std::filesystem::temp_directory_path() / fmt::format("lt_step_bench_{}", ::getpid());
  std::filesystem::remove_all(cache);
  set_option("LT_CACHE_DIR", cache.string());

  std::vector<Workload> loads;
  if (which == "all" || which == "mlp")
    loads.push_back(classifier_workload<examples::Mlp>("mlp 784-512-512-10 b128", {128, 784},
                                                       std::vector<int64_t>{784, 512, 512, 10}));
  if (which == "all" || which == "cnn")
    loads.push_back(classifier_workload<examples::Cnn>("cnn conv32-pool-conv64-pool-fc128-fc10 b64",
                                                       {64, 1, 28, 28}));
  if (which == "all" || which == "resnet")
    loads.push_back(
        classifier_workload<examples::ResNet20>("resnet-20 1x32x32 b32", {32, 1, 32, 32}));
  if (which == "all" || which == "gpt") loads.push_back(gpt());
  if (!only.empty()) {
    const Mode mode = only == "eager" ? Mode::Eager : Mode::Lazy;
    for (const Workload& w : loads) {
      const Phase p = run(w, mode, steps);
      fmt::print("{} {}: {:.3f} ms/step at {} threads", w.name, only, p.steady_ms, num_threads());
      if (mode == Mode::Lazy) fmt::print(", trace+hash {:.1f} us of {:.0f} ops", p.trace_us, p.ops);
      fmt::print("\n");
    }
    std::filesystem::remove_all(cache);
    return;
  }
  fmt::print(
      "lazytrain step benchmark: {} timed steps after 2 warm-up steps; opt level {}; {}\n", steps,
      compile_options().opt_level, g_bf16 ? "bf16 autocast" : "f32");
  for (const Workload& w : loads) {
    fmt::print("\n{}\n", w.name);
    fmt::print("{:>8} {:>12} {:>12} {:>8} {:>14} {:>14} {:>10} {:>10} {:>15}\n", "threads",
               "eager ms", "lazy ms", "speedup", "cold 1st+2nd", "warm 1st+2nd", "eager MB",
               "lazy MB", "trace+hash us");
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      const Phase eager = run(w, Mode::Eager, steps);
      std::filesystem::remove_all(cache);  // cold: nothing compiled on disk either
      clear_graph_cache();
      metrics::reset();
      const Phase cold = run(w, Mode::Lazy, steps);
      clear_graph_cache();  // in-memory cache gone; compiled objects stay on disk
      const Phase warm = run(w, Mode::Lazy, 0);
      fmt::print(
          "{:>8} {:>12.3f} {:>12.3f} {:>7.2f}x {:>11.0f} ms {:>11.0f} ms {:>10.1f} {:>10.1f} "
          "{:>15.1f}\n",
          threads, eager.steady_ms, cold.steady_ms, eager.steady_ms / cold.steady_ms,
          cold.first_ms + cold.second_ms, warm.first_ms + warm.second_ms, eager.peak_mb,
          cold.peak_mb, cold.trace_us);
    }
  }
  std::filesystem::remove_all(cache);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lazytrain step benchmark: eager vs lazy training steps, cold and warm compiles"};
  int steps = 30;
  std::string which = "all", only, precision = "f32";
  app.add_option("steps", steps, "Timed steps per run")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("model", which, "Which model")
      ->capture_default_str()
      ->check(CLI::IsMember({"mlp", "cnn", "resnet", "gpt", "all"}));
  app.add_option("mode", only,
                 "Only this mode, at LT_NUM_THREADS threads (for profilers); both: the table")
      ->check(CLI::IsMember({"eager", "lazy", "both"}));
  app.add_option("precision", precision, "f32, or bf16 autocast around forward and loss")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "bf16"}));
  return lt::cli::run(app, argc, argv, [&] {
    g_bf16 = precision == "bf16";
    bench(steps, which, only == "both" ? "" : only);
  });
}
