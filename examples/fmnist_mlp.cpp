// Trains an MLP on Fashion-MNIST with SGD (momentum, weight decay) and a warmup + cosine schedule,
// through the shared trainer loop (examples/trainer). --compiler-opt runs the same loop in lazy
// mode: each step is traced, cut at lt::mark_step(), compiled once, cached and run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "examples/mlp_model.h"
#include "examples/trainer/trainer.h"
#include "tools/cli.h"

namespace {

struct MlpFlags {
  std::vector<int64_t> hidden{128};
  double dropout = 0;
  bool normalize = true;
};

void run(const lt::examples::TrainConfig& c, const MlpFlags& f) {
  using namespace lt;
  manual_seed(c.seed);
  const data::FashionMnistOptions train_opts{c.data_dir, c.train_limit, f.normalize};
  const data::FashionMnistOptions test_opts{c.data_dir, c.test_limit, f.normalize};
  std::vector<int64_t> sizes{784};
  sizes.insert(sizes.end(), f.hidden.begin(), f.hidden.end());
  sizes.push_back(10);
  examples::Mlp model(sizes, f.dropout);

  examples::TrainTask task;
  task.name = "fmnist_mlp";
  task.model = &model;
  task.train = std::make_shared<data::TensorDataset>(
      data::load_fashion_mnist(data::Split::Train, train_opts));
  task.test = std::make_shared<data::TensorDataset>(
      data::load_fashion_mnist(data::Split::Test, test_opts));
  task.description = fmt::format("{} MLP{}{}", fmt::join(sizes, "-"),
                                 f.dropout > 0 ? fmt::format(", dropout {}", f.dropout) : "",
                                 f.normalize ? ", normalized pixels" : "");
  task.logits_and_targets = [&](const data::Batch& b) {
    return std::pair{model.forward(b.images), b.labels};
  };
  task.make_optimizer = [&](const examples::TrainConfig& cfg) {
    return examples::sgd_for(model, cfg);
  };
  examples::train(task, c);
}

}  // namespace

int main(int argc, char** argv) {
  lt::examples::TrainConfig c;
  c.epochs = 5;
  c.lr = 0.05;
  MlpFlags f;
  CLI::App app{"Train an MLP on Fashion-MNIST (SGD with momentum, cosine schedule), eager or "
               "lazy (--compiler-opt)."};
  lt::examples::add_train_flags(app, c, /*with_momentum=*/true);
  app.add_option("--hidden", f.hidden, "Hidden layer sizes, e.g. --hidden 256 128")
      ->capture_default_str()
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--dropout", f.dropout, "Dropout after each hidden layer (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  app.add_flag("--normalize,!--no-normalize", f.normalize,
               "Standardize pixels with the training-set mean and std (default), or only scale "
               "them to [0,1]");
  return lt::cli::run(app, argc, argv, [&] {
    c.settings.apply();
    run(c, f);
  });
}
