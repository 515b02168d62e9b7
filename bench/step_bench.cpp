// Training-step benchmark, one run, printing ratios: eager vs lazy (compiled) at 1 and 2
// threads for the MLP 784-512-512-10 (batch 128) and the small CNN (batch 64, 28x28), both with
// SGD momentum 0.9; cold compile time (empty disk cache), warm start (objects from the disk
// cache, empty in-memory cache) and peak memory. Usage: lt_bench_step [steps] [mlp|cnn|all]
// [eager|lazy]: with a mode, only that mode runs, at LT_NUM_THREADS threads (for profilers).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>

#include "examples/cnn_model.h"
#include "examples/mlp_model.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/options.h"
#include "runtime/buffer.h"
#include "tools/cli.h"

namespace {

using namespace lt;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Workload {
  std::string name;
  std::function<std::vector<Tensor>()> make_params;  // fresh model, same seed
  std::function<Tensor(const std::vector<Tensor>&, const Tensor&)> forward;
  Tensor x, y;
};

struct Phase {
  double first_ms = 0, second_ms = 0, steady_ms = 0, peak_mb = 0;
};

/// Runs `steps` timed steps after two untimed-but-recorded first steps.
Phase run(const Workload& w, Mode mode, int steps) {
  manual_seed(1);
  std::vector<Tensor> params = w.make_params();
  examples::Sgd opt(params, 0.01, 0.9);
  rt::Buffer::reset_peak();
  ModeGuard guard(mode);
  auto step = [&] {
    opt.zero_grad();
    Tensor loss = cross_entropy(w.forward(params, w.x), w.y);
    loss.backward();
    opt.step();
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
  for (int i = 0; i < steps; ++i) step();
  p.steady_ms = ms_since(t) / steps;
  p.peak_mb = static_cast<double>(rt::Buffer::peak_bytes()) / (1 << 20);
  return p;
}

Workload mlp() {
  manual_seed(0);
  Workload w{"mlp 784-512-512-10 b128", nullptr, nullptr, randn({128, 784}),
             cast(rand({128}) * 10.0, DType::I64)};
  w.make_params = [] { return examples::Mlp({784, 512, 512, 10}).parameters(); };
  w.forward = [](const std::vector<Tensor>& p, const Tensor& x) {
    Tensor h = relu(linear(x, p[0], p[1]));
    h = relu(linear(h, p[2], p[3]));
    return linear(h, p[4], p[5]);
  };
  return w;
}

Workload cnn() {
  manual_seed(0);
  Workload w{"cnn conv32-pool-conv64-pool-fc128-fc10 b64", nullptr, nullptr, randn({64, 1, 28, 28}),
             cast(rand({64}) * 10.0, DType::I64)};
  w.make_params = [] { return examples::Cnn().parameters(); };
  w.forward = [](const std::vector<Tensor>& p, const Tensor& x) {
    const Conv2dOptions same{{1, 1}, {1, 1}, {1, 1}, 1};
    Tensor h = max_pool2d(relu(conv2d(x, p[0], p[1], same)));
    h = max_pool2d(relu(conv2d(h, p[2], p[3], same)));
    h = relu(linear(flatten(h, 1), p[4], p[5]));
    return linear(h, p[6], p[7]);
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
  if (which == "all" || which == "mlp") loads.push_back(mlp());
  if (which == "all" || which == "cnn") loads.push_back(cnn());
  if (!only.empty()) {
    const Mode mode = only == "eager" ? Mode::Eager : Mode::Lazy;
    for (const Workload& w : loads)
      fmt::print("{} {}: {:.3f} ms/step at {} threads\n", w.name, only,
                 run(w, mode, steps).steady_ms, num_threads());
    std::filesystem::remove_all(cache);
    return;
  }
  fmt::print("lazytrain step benchmark: {} timed steps after 2 warm-up steps; opt level {}\n",
             steps, compile_options().opt_level);
  for (const Workload& w : loads) {
    fmt::print("\n{}\n", w.name);
    fmt::print("{:>8} {:>12} {:>12} {:>8} {:>14} {:>14} {:>10} {:>10}\n", "threads", "eager ms",
               "lazy ms", "speedup", "cold 1st+2nd", "warm 1st+2nd", "eager MB", "lazy MB");
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
          "{:>8} {:>12.3f} {:>12.3f} {:>7.2f}x {:>11.0f} ms {:>11.0f} ms {:>10.1f} {:>10.1f}\n",
          threads, eager.steady_ms, cold.steady_ms, eager.steady_ms / cold.steady_ms,
          cold.first_ms + cold.second_ms, warm.first_ms + warm.second_ms, eager.peak_mb,
          cold.peak_mb);
    }
  }
  std::filesystem::remove_all(cache);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lazytrain step benchmark: eager vs lazy training steps, cold and warm compiles"};
  int steps = 30;
  std::string which = "all", only;
  app.add_option("steps", steps, "Timed steps per run")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("model", which, "Which model")
      ->capture_default_str()
      ->check(CLI::IsMember({"mlp", "cnn", "all"}));
  app.add_option("mode", only, "Only this mode, at LT_NUM_THREADS threads (for profilers)")
      ->check(CLI::IsMember({"eager", "lazy"}));
  return lt::cli::run(app, argc, argv, [&] { bench(steps, which, only); });
}
