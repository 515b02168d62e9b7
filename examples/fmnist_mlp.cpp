// Trains an MLP on Fashion-MNIST with a hand-written SGD loop, printing per epoch the mean
// training loss, the test accuracy and the time per step. --compiler-opt runs the same loop in
// lazy mode: each step is traced, cut at lt::mark_step(), cached by structural hash and run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "examples/mlp_model.h"
#include "examples/setting_flags.h"
#include "examples/step_timer.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/threads.h"
#include "tools/cli.h"

namespace {

struct Args {
  std::vector<int64_t> hidden{128};
  int epochs = 5;
  int64_t batch_size = 64;
  double lr = 0.05;
  double momentum = 0.9;
  int64_t train_limit = -1;
  uint64_t seed = 0;
  lt::examples::SettingFlags settings;
  std::string data_dir;
  bool normalize = true;
  std::string schedule = "cosine";
  bool compiler_opt = false;
};

std::string sizes_str(const std::vector<int64_t>& sizes) {
  return fmt::format("{}", fmt::join(sizes, "-"));
}

void train(const Args& a) {
  using namespace lt;
  manual_seed(a.seed);
  const data::Dataset train_set =
      data::load_fashion_mnist(data::Split::Train, {a.data_dir, a.train_limit, a.normalize});
  const data::Dataset test_set =
      data::load_fashion_mnist(data::Split::Test, {a.data_dir, -1, a.normalize});

  std::vector<int64_t> sizes{784};
  sizes.insert(sizes.end(), a.hidden.begin(), a.hidden.end());
  sizes.push_back(10);
  examples::Mlp model(sizes);
  examples::Sgd opt(model.parameters(), a.lr, a.momentum);
  data::BatchIterator batches(train_set, {.batch_size = a.batch_size, .seed = a.seed});
  fmt::print(
      "fmnist_mlp: {} MLP, {} train / {} test images{}, batch {}, lr {} ({}), momentum {}, "
      "{} threads, {} mode\n",
      sizes_str(sizes), train_set.size(), test_set.size(), a.normalize ? " (normalized)" : "",
      a.batch_size, a.lr, a.schedule, a.momentum, lt::num_threads(),
      a.compiler_opt ? "lazy" : "eager");
  ModeGuard mode(a.compiler_opt ? Mode::Lazy : Mode::Eager);

  const int64_t total_steps = a.epochs * batches.num_batches();
  int64_t global_step = 0;
  for (int epoch = 0; epoch < a.epochs; ++epoch) {
    examples::StepTimer timer;
    batches.start_epoch(epoch);
    Tensor loss_sum = zeros({});
    int64_t steps = 0;
    while (auto b = batches.next()) {
      timer.start();
      if (a.schedule == "cosine") opt.set_lr(examples::cosine_lr(a.lr, global_step, total_steps));
      ++global_step;
      loss_sum = loss_sum + examples::train_step(model, opt, *b);
      if (a.compiler_opt) mark_step();
      timer.stop();
      ++steps;
    }
    const double mean_loss = loss_sum.item<double>() / static_cast<double>(steps);
    if (!std::isfinite(mean_loss))
      throw Error(fmt::format("training diverged: mean loss {} in epoch {}", mean_loss, epoch + 1));
    const double acc = examples::accuracy(model, test_set);
    fmt::print(
        "epoch {:>2}  loss {:.4f}  test accuracy {:.2f}%  {:.3f} ms/step, median {:.3f} ({} "
        "steps)\n",
        epoch + 1, mean_loss, 100 * acc, timer.mean_ms(), timer.median_ms(), steps);
  }
  if (a.compiler_opt)
    fmt::print(
        "lazy: {} graphs prepared, {} cache hits, {} syncs (LT_METRICS=1 for the full report)\n",
        metrics::counter("cache_miss"), metrics::counter("cache_hit"), metrics::counter("sync"));
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Train an MLP on Fashion-MNIST (hand-written SGD with momentum), eager or lazy."};
  app.add_flag("--compiler-opt", a.compiler_opt,
               "Lazy mode: trace each step, cut it at mark_step, cache and run the graph");
  app.add_option("--hidden", a.hidden, "Hidden layer sizes, e.g. --hidden 256 128")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--epochs", a.epochs, "Passes over the training set (the last one given wins, so "
                                       "scripts/run_main.sh's default can be overridden)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(0))
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--batch-size", a.batch_size, "Examples per step")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--lr", a.lr, "Peak learning rate")
      ->capture_default_str()
      ->check(lt::cli::number_at_least(0));
  app.add_option("--schedule", a.schedule, "Learning-rate schedule over the whole run")
      ->capture_default_str()
      ->check(CLI::IsMember({"constant", "cosine"}));
  app.add_option("--momentum", a.momentum, "SGD momentum (0 disables it)")
      ->capture_default_str()
      ->check(lt::cli::number_at_least(0));
  app.add_option("--train-limit", a.train_limit, "Use the first N training images (-1: all)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(-1));
  app.add_option("--seed", a.seed, "Seeds the initialization and the shuffle")
      ->capture_default_str();
  a.settings.add_to(app);
  app.add_option("--data-dir", a.data_dir,
                 "Directory of the IDX files (default: $LT_FASHION_MNIST_DIR, else "
                 "/usr/share/datasets/fashion-mnist)");
  app.add_flag("--normalize,!--no-normalize", a.normalize,
               "Standardize pixels with the training-set mean and std (default), or only scale "
               "them to [0,1]");
  return lt::cli::run(app, argc, argv, [&] {
    a.settings.apply();
    train(a);
  });
}
