// Trains ResNet-20 (CIFAR style, examples/resnet_model.h) on Fashion-MNIST images zero-padded to
// 32x32, with random-crop (4 pixels) and horizontal-flip augmentation, SGD with momentum 0.9 and
// weight decay 5e-4, and a warmup + cosine schedule, through the shared trainer loop; eager or
// (--compiler-opt) lazy.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>

#include "examples/resnet_model.h"
#include "examples/trainer/trainer.h"
#include "tools/cli.h"

namespace {

/// Fashion-MNIST as [N, 1, 32, 32]: normalized, then padded by 2 with the normalized black.
std::shared_ptr<lt::data::TensorDataset> padded(const lt::data::TensorDataset& flat) {
  const double black = (0 - lt::data::kFashionMnistMean) / lt::data::kFashionMnistStd;
  return std::make_shared<lt::data::TensorDataset>(
      lt::data::pad_images(lt::reshape(flat.images, {-1, 1, 28, 28}), 2, black), flat.labels);
}

void run(const lt::examples::TrainConfig& c, bool augment, bool sync_batchnorm) {
  using namespace lt;
  manual_seed(c.seed);
  examples::ResNet20 model;
  // Replicas normalize over the global batch, as one process does, unless told to normalize over
  // their own shards (PyTorch DDP without convert_sync_batchnorm).
  dist::init();
  if (dist::world_size() > 1 && sync_batchnorm) nn::convert_sync_batchnorm(model);
  examples::TrainTask task;
  task.name = "fmnist_resnet";
  task.model = &model;
  task.train = padded(data::load_fashion_mnist(
      data::Split::Train, {.dir = c.data_dir, .limit = c.train_limit, .normalize = true}));
  task.test = padded(data::load_fashion_mnist(
      data::Split::Test, {.dir = c.data_dir, .limit = c.test_limit, .normalize = true}));
  task.description = fmt::format("ResNet-20 ({} parameters), 32x32 inputs{}",
                                 model.num_parameters(),
                                 augment ? ", crop+flip augmentation" : "");
  if (augment) {
    const double black = (0 - data::kFashionMnistMean) / data::kFashionMnistStd;
    task.train_batch = [black, seed = c.seed](std::span<const data::Example> examples,
                                              int64_t epoch, int64_t batch, int64_t first_row) {
      data::Batch b = examples::stack_batch(examples);
      b.images = data::random_crop_flip(b.images, 4, /*flip=*/true, black, seed, epoch, batch,
                                        first_row);
      return b;
    };
  }
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
  c.epochs = 10;
  c.batch_size = 128;
  c.lr = 0.1;
  c.weight_decay = 5e-4;
  c.warmup_steps = 500;
  c.log_interval = 100;
  bool augment = true, sync_batchnorm = true;
  CLI::App app{"Train ResNet-20 on Fashion-MNIST padded to 32x32 (SGD momentum, weight decay, "
               "warmup + cosine, crop and flip augmentation), eager or lazy (--compiler-opt)."};
  lt::examples::add_train_flags(app, c, /*with_momentum=*/true);
  app.add_flag("--augment,!--no-augment", augment,
               "Random 4-pixel shifts and horizontal flips of the training images (default on)");
  app.add_flag("--sync-batchnorm,!--no-sync-batchnorm", sync_batchnorm,
               "With replicas, batch norms use the statistics of the global batch (default on); "
               "off, each rank's of its own examples");
  return lt::cli::run(app, argc, argv, [&] {
    c.settings.apply();
    run(c, augment, sync_batchnorm);
  });
}
