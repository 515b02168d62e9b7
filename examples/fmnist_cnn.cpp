// Trains the small CNN (conv32-pool-conv64-pool-fc128-fc10) on Fashion-MNIST with SGD momentum
// and a cosine schedule through the shared trainer loop (examples/trainer), eager or
// (--compiler-opt) lazy.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "examples/cnn_model.h"
#include "examples/trainer/trainer.h"
#include "tools/cli.h"

namespace {

void run(const lt::examples::TrainConfig& c, double dropout) {
  using namespace lt;
  manual_seed(c.seed);
  examples::Cnn model(1, dropout);
  examples::TrainTask task;
  task.name = "fmnist_cnn";
  task.model = &model;
  task.train = std::make_shared<data::TensorDataset>(data::load_fashion_mnist(
      data::Split::Train, {.dir = c.data_dir, .limit = c.train_limit, .normalize = true}));
  task.test = std::make_shared<data::TensorDataset>(data::load_fashion_mnist(
      data::Split::Test, {.dir = c.data_dir, .limit = c.test_limit, .normalize = true}));
  task.description = fmt::format("conv32-pool-conv64-pool-fc128-fc10 CNN{}",
                                 dropout > 0 ? fmt::format(", dropout {}", dropout) : "");
  task.logits_and_targets = [&](const data::Batch& b) {
    return std::pair{model.forward(reshape(b.images, {-1, 1, 28, 28})), b.labels};
  };
  task.make_optimizer = [&](const examples::TrainConfig& cfg) {
    return examples::sgd_for(model, cfg);
  };
  examples::train(task, c);
}

}  // namespace

int main(int argc, char** argv) {
  lt::examples::TrainConfig c;
  c.epochs = 1;
  c.lr = 0.02;
  c.train_limit = 10000;
  c.test_limit = 2000;
  double dropout = 0;
  CLI::App app{"Train a small CNN on Fashion-MNIST (SGD with momentum, cosine schedule), eager or "
               "lazy (--compiler-opt)."};
  lt::examples::add_train_flags(app, c, /*with_momentum=*/true);
  app.add_option("--dropout", dropout, "Dropout before the last layer (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  return lt::cli::run(app, argc, argv, [&] {
    c.settings.apply();
    run(c, dropout);
  });
}
