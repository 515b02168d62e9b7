// Trains torchvision's ResNet-18/34/50/101 (--arch) on ImageNet-1k: a mock of it generated per
// index (--data mock, the migration guides' benchmark workload) or a folder in ImageFolder's
// layout (--data DIR with DIR/train/<class>/*.jpg and DIR/val/<class>/*.jpg) with torchvision's
// training transforms (RandomResizedCrop, horizontal flip, normalize) and validation transforms
// (resize to 256/224 of the size, center crop). SGD with momentum or AdamW, a warmup + cosine
// schedule, eager or lazy (--compiler-opt), on any number of ranks under lt-launch; each log
// line gives samples/s, ms/step, the wait for data and peak memory; top-1 and top-5 at the end.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "examples/torchvision_resnet.h"
#include "examples/trainer/trainer.h"
#include "lt/vision.h"
#include "tools/cli.h"

namespace {

using namespace lt;

/// n images f32[3, size, size] and labels in [0, classes), each drawn from (seed, split, index)
/// alone, so that every loader, worker count and rank split reads the same examples: N(0, 1)
/// pixels, as normalized images look, with the label's channel (label mod 3) raised by 0.5, a
/// signal that training can find.
class MockImageNet final : public data::Dataset {
 public:
  MockImageNet(int64_t n, int64_t size, int64_t classes, uint64_t seed, uint64_t split)
      : n_(n), size_(size), classes_(classes), seed_(seed), split_(split) {}
  int64_t size() const override { return n_; }
  data::Example get(int64_t index) const override {
    if (index < 0 || index >= n_)
      throw InputError(
          fmt::format("MockImageNet: index {} is out of range for {} images", index, n_));
    vision::Rng rng({seed_, split_, static_cast<uint64_t>(index)});
    const int64_t label = rng.below(classes_);
    std::vector<float> pixels(static_cast<size_t>(3 * size_ * size_));
    for (float& p : pixels) p = static_cast<float>(rng.normal());
    const int64_t plane = size_ * size_;
    float* raised = pixels.data() + (label % 3) * plane;
    for (int64_t p = 0; p < plane; ++p) raised[p] += 0.5f;
    return {from_vector(pixels, {3, size_, size_}),
            full({}, static_cast<double>(label), DType::I64)};
  }

 private:
  int64_t n_, size_, classes_;
  uint64_t seed_, split_;
};

/// `limit` examples of `base` spread evenly over it (an ImageFolder is sorted by class, so its
/// first examples would all be one class); all of it for a limit < 0 or beyond its size.
class Spread final : public data::Dataset {
 public:
  Spread(std::shared_ptr<const data::Dataset> base, int64_t limit)
      : base_(std::move(base)),
        n_(limit < 0 || limit > base_->size() ? base_->size() : limit) {}
  int64_t size() const override { return n_; }
  data::Example get(int64_t index) const override {
    return base_->get(index * base_->size() / n_);
  }

 private:
  std::shared_ptr<const data::Dataset> base_;
  int64_t n_;
};

struct ImageNetFlags {
  std::string arch = "resnet50";
  std::string data = "mock";
  std::string optimizer = "sgd";
  int64_t image_size = 224;
  int64_t num_classes = 1000;
  bool sync_batchnorm = true;
  bool checkpoint_blocks = false;
};

void run(const examples::TrainConfig& c, const ImageNetFlags& f) {
  manual_seed(c.seed);
  examples::TorchvisionResNet model(f.arch, f.num_classes);
  model.checkpoint_blocks = f.checkpoint_blocks;
  dist::init();
  if (dist::world_size() > 1 && f.sync_batchnorm) nn::convert_sync_batchnorm(model);
  examples::TrainTask task;
  task.name = "imagenet_" + f.arch;
  task.model = &model;
  const int64_t size = f.image_size;
  std::string data_text;
  if (f.data == "mock") {
    task.train = std::make_shared<MockImageNet>(c.train_limit >= 0 ? c.train_limit : 1281167,
                                                size, f.num_classes, c.seed, 0);
    task.test = std::make_shared<MockImageNet>(c.test_limit >= 0 ? c.test_limit : 50000, size,
                                               f.num_classes, c.seed, 1);
    data_text = fmt::format("mock ImageNet {}x{}, {} classes", size, size, f.num_classes);
  } else {
    auto train = std::make_shared<vision::ImageFolder>(f.data + "/train");
    auto val = std::make_shared<vision::ImageFolder>(f.data + "/val");
    if (static_cast<int64_t>(train->classes().size()) > f.num_classes)
      throw InputError(fmt::format("--data {}: {} classes in train/, more than --num-classes {}",
                                   f.data, train->classes().size(), f.num_classes));
    if (val->classes() != train->classes())
      throw InputError(fmt::format("--data {}: val/ and train/ hold different class folders",
                                   f.data));
    data_text = fmt::format("{} ({} classes), RandomResizedCrop {} + flip", f.data,
                            train->classes().size(), size);
    task.train = std::make_shared<Spread>(train, c.train_limit);
    task.test = std::make_shared<Spread>(val, c.test_limit);
    // Each row's crop and flip draw from (seed, epoch, micro-batch, row in the global batch).
    task.train_batch = [size, seed = c.seed](std::span<const data::Example> examples,
                                             int64_t epoch, int64_t batch, int64_t first_row) {
      std::vector<data::Example> made;
      for (size_t j = 0; j < examples.size(); ++j) {
        vision::Rng rng({seed, static_cast<uint64_t>(epoch), static_cast<uint64_t>(batch),
                         static_cast<uint64_t>(first_row) + j});
        Tensor x = vision::random_resized_crop(examples[j][0], size, rng);
        made.push_back({vision::normalize(vision::random_horizontal_flip(x, rng)),
                        examples[j][1]});
      }
      return examples::stack_batch(made);
    };
    task.test_batch = [size](std::span<const data::Example> examples) {
      std::vector<data::Example> made;
      for (const data::Example& e : examples)
        made.push_back({vision::normalize(vision::center_crop(
                            vision::resize(e[0], size * 256 / 224), size)),
                        e[1]});
      return examples::stack_batch(made);
    };
  }
  task.eval_batch = std::max<int64_t>(c.batch_size / dist::world_size(), 1);
  task.description = fmt::format("torchvision {} ({} parameters), {}", f.arch,
                                 model.num_parameters(), data_text);
  task.logits_and_targets = [&](const data::Batch& b) {
    return std::pair{model.forward(b.images), b.labels};
  };
  task.make_optimizer = [&](const examples::TrainConfig& cfg) {
    return f.optimizer == "sgd" ? examples::sgd_for(model, cfg) : examples::adamw_for(model, cfg);
  };
  examples::train(task, c);
}

}  // namespace

int main(int argc, char** argv) {
  lt::examples::TrainConfig c;
  c.epochs = 1;
  c.batch_size = 32;
  c.lr = 0.1;
  c.weight_decay = 1e-4;
  c.log_interval = 10;
  c.num_workers = 2;
  ImageNetFlags f;
  CLI::App app{"Train torchvision's ResNet-18/34/50/101 on a mock ImageNet-1k or an ImageFolder "
               "of JPEGs (SGD momentum or AdamW, warmup + cosine), eager or lazy "
               "(--compiler-opt), on one rank or many (lt-launch)."};
  lt::examples::add_train_flags(app, c, /*with_momentum=*/true);
  app.add_option("--arch", f.arch, "torchvision architecture")
      ->capture_default_str()
      ->check(CLI::IsMember({"resnet18", "resnet34", "resnet50", "resnet101"}));
  app.add_option("--data", f.data,
                 "mock (generated per index), or a folder holding train/ and val/ in "
                 "ImageFolder's layout (<class>/<image>.jpg)")
      ->capture_default_str();
  app.add_option("--image-size", f.image_size, "Training and validation crop size")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{32}, int64_t{1024}));
  app.add_option("--num-classes", f.num_classes, "Classes of the model's classifier")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{100000}));
  app.add_option("--optimizer", f.optimizer, "sgd (with --momentum) or adamw")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "adamw"}));
  app.add_flag("--sync-batchnorm,!--no-sync-batchnorm", f.sync_batchnorm,
               "With replicas, batch norms use the statistics of the global batch (default on)");
  app.add_flag("--activation-checkpointing", f.checkpoint_blocks,
               "Recompute each residual block's activations in backward instead of keeping them "
               "(lt::checkpoint per block)");
  return lt::cli::run(app, argc, argv, [&] {
    c.settings.apply();
    run(c, f);
  });
}
