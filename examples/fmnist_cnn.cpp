// Trains the small CNN (conv32-pool-conv64-pool-fc128-fc10) on Fashion-MNIST with SGD momentum,
// eager or (--compiler-opt) lazy, printing per epoch the mean loss, test accuracy and ms/step.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>

#include "examples/cnn_model.h"
#include "examples/setting_flags.h"
#include "examples/step_timer.h"
#include "examples/sgd.h"
#include "lt/data.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "tools/cli.h"

namespace {

struct Args {
  int epochs = 1;
  int64_t batch_size = 64;
  double lr = 0.02;
  double momentum = 0.9;
  int64_t train_limit = 10000;
  int64_t test_limit = 2000;
  uint64_t seed = 0;
  lt::examples::SettingFlags settings;
  bool compiler_opt = false;
};

lt::Tensor as_images(const lt::Tensor& flat) { return lt::reshape(flat, {-1, 1, 28, 28}); }

double accuracy(lt::examples::Cnn& model, const lt::data::Dataset& ds) {
  using namespace lt;
  NoGradGuard no_grad;
  int64_t correct = 0;
  const int64_t chunk = 500;
  for (int64_t start = 0; start < ds.size(); start += chunk) {
    Tensor x, y;
    {
      ModeGuard eager(Mode::Eager);  // chunks are input data, not traced slices (no recompiles)
      x = as_images(slice(ds.images, 0, start, start + chunk));
      y = slice(ds.labels, 0, start, start + chunk);
    }
    correct += sum(cast(eq(argmax(model.forward(x), 1), y), DType::I64)).item<int64_t>();
  }
  return static_cast<double>(correct) / static_cast<double>(ds.size());
}

void train(const Args& a) {
  using namespace lt;
  manual_seed(a.seed);
  const data::Dataset train_set =
      data::load_fashion_mnist(data::Split::Train, {.limit = a.train_limit, .normalize = true});
  const data::Dataset test_set =
      data::load_fashion_mnist(data::Split::Test, {.limit = a.test_limit, .normalize = true});
  examples::Cnn model;
  examples::Sgd opt(model.parameters(), a.lr, a.momentum);
  data::BatchIterator batches(train_set,
                              {.batch_size = a.batch_size, .seed = a.seed, .drop_last = true});
  fmt::print(
      "fmnist_cnn: {} train / {} test images, batch {}, lr {}, momentum {}, {} threads, {} mode\n",
      train_set.size(), test_set.size(), a.batch_size, a.lr, a.momentum, num_threads(),
      a.compiler_opt ? "lazy" : "eager");
  ModeGuard mode(a.compiler_opt ? Mode::Lazy : Mode::Eager);
  for (int epoch = 0; epoch < a.epochs; ++epoch) {
    examples::StepTimer timer;
    batches.start_epoch(epoch);
    Tensor loss_sum = zeros({});
    int64_t steps = 0;
    while (auto b = batches.next()) {
      timer.start();
      opt.zero_grad();
      Tensor loss = cross_entropy(model.forward(as_images(b->images)), b->labels);
      loss.backward();
      opt.step();
      loss_sum = loss_sum + loss.detach();
      if (a.compiler_opt) mark_step();
      timer.stop();
      ++steps;
    }
    const double mean_loss = loss_sum.item<double>() / static_cast<double>(steps);
    if (!std::isfinite(mean_loss))
      throw Error(fmt::format("training diverged: mean loss {} in epoch {}", mean_loss, epoch + 1));
    fmt::print(
        "epoch {:>2}  loss {:.4f}  test accuracy {:.2f}%  {:.3f} ms/step, median {:.3f} ({} "
        "steps)\n",
        epoch + 1, mean_loss, 100 * accuracy(model, test_set), timer.mean_ms(), timer.median_ms(),
        steps);
  }
  if (a.compiler_opt)
    fmt::print("lazy: {} graphs prepared, {} cache hits, {} syncs\n",
               metrics::counter("cache_miss"), metrics::counter("cache_hit"),
               metrics::counter("sync"));
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"Train a small CNN on Fashion-MNIST (SGD with momentum), eager or lazy."};
  app.add_flag("--compiler-opt", a.compiler_opt, "Lazy mode: trace, cache and run whole steps");
  app.add_option("--epochs", a.epochs, "Passes over the training subset")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(0));
  app.add_option("--batch-size", a.batch_size, "Examples per step")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--lr", a.lr, "Learning rate")
      ->capture_default_str()
      ->check(lt::cli::number_at_least(0));
  app.add_option("--momentum", a.momentum, "SGD momentum")
      ->capture_default_str()
      ->check(lt::cli::number_at_least(0));
  app.add_option("--train-limit", a.train_limit, "First N training images (-1: all)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(-1));
  app.add_option("--test-limit", a.test_limit, "First N test images (-1: all)")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(-1));
  app.add_option("--seed", a.seed, "Seeds initialization and shuffling")->capture_default_str();
  a.settings.add_to(app);
  return lt::cli::run(app, argc, argv, [&] {
    a.settings.apply();
    train(a);
  });
}
