// End to end: the eager MLP trainer of examples/ learns Fashion-MNIST. One epoch over the first
// 10,000 training images must lower the loss and reach 80% test accuracy (about 84-85% is
// typical), which catches wrong gradients, a broken optimizer update or a bad data pipeline.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "examples/mlp_model.h"

namespace lt {
namespace {

double mean_of(const std::vector<float>& v, size_t begin, size_t end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) /
         static_cast<double>(end - begin);
}

TEST(MlpFashionMnist, OneEpochOnTenThousandImagesReachesEightyPercent) {
  manual_seed(0);
  const data::Dataset train = data::load_fashion_mnist(data::Split::Train, {.limit = 10000});
  const data::Dataset test = data::load_fashion_mnist(data::Split::Test);
  ASSERT_EQ(train.size(), 10000);
  ASSERT_EQ(test.size(), 10000);

  const examples::Mlp model({784, 128, 10});
  examples::Sgd opt(model.parameters(), /*lr=*/0.05, /*momentum=*/0.9);
  const double initial_accuracy = examples::accuracy(model, test);

  data::BatchIterator batches(train, {.batch_size = 64, .seed = 0});
  std::vector<float> losses;
  while (auto b = batches.next())
    losses.push_back(examples::train_step(model, opt, *b).item<float>());
  ASSERT_EQ(losses.size(), 157u);

  // Means over 20 steps smooth out batch noise: ln(10) = 2.30 at the start, ~0.45 at the end.
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
