// End to end: the eager MLP trainer of examples/ learns Fashion-MNIST. One epoch over the first
// 10,000 training images must lower the loss and reach 80% test accuracy (82.4% with this seed;
// 81.9-83.0% over seeds 0-11), which catches wrong gradients, a broken optimizer update or a bad
// data pipeline. Batch 32 with a cosine-decayed lr gave the steadiest accuracy of those tried.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "examples/mlp_model.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

double mean_of(const std::vector<float>& v, size_t begin, size_t end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) /
         static_cast<double>(end - begin);
}

TEST(MlpFashionMnist, OneEpochOnTenThousandImagesReachesEightyPercent) {
  manual_seed(0);
  const data::TensorDataset train =
      data::load_fashion_mnist(data::Split::Train, {.limit = 10000, .normalize = true});
  const data::TensorDataset test = data::load_fashion_mnist(data::Split::Test, {.normalize = true});
  ASSERT_EQ(train.size(), 10000);
  ASSERT_EQ(test.size(), 10000);

  examples::Mlp model({784, 128, 10});
  constexpr double kLr = 0.02;
  optim::SGD opt(model.parameters(), {.lr = kLr, .momentum = 0.9});
  const double initial_accuracy = examples::accuracy(model, test);

  data::BatchIterator batches(train, {.batch_size = 32, .seed = 0});
  const int64_t steps = batches.num_batches();
  ASSERT_EQ(steps, 313);
  optim::sched::Scheduler sched(opt, optim::sched::CosineAnnealingLR(steps));
  const std::vector<float> losses = testing::train_steps(
      static_cast<int>(steps),
      [&](int) { return examples::train_step(model, opt, batches.next().value()); },
      {.after_update = [&](int) { sched.step(); }});
  EXPECT_FALSE(batches.next()) << "one epoch is every batch";
  ASSERT_EQ(losses.size(), static_cast<size_t>(steps));

  // Means over 20 steps smooth out batch noise: about 1.3 over the first 20, 0.5 the last 20.
  const double first = mean_of(losses, 0, 20);
  const double last = mean_of(losses, losses.size() - 20, losses.size());
  EXPECT_LT(last, 0.5 * first) << "loss did not fall: first 20 steps " << first << ", last 20 "
                               << last;
  const double acc = examples::accuracy(model, test);
  RecordProperty("test_accuracy", std::to_string(acc));
  std::printf("loss %.4f -> %.4f, test accuracy %.2f%% -> %.2f%%\n", first, last,
              100 * initial_accuracy, 100 * acc);
  EXPECT_GE(acc, 0.80);
}

}  // namespace
}  // namespace lt
