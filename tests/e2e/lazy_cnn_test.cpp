// The CNN (convolutions, pooling, their gradients) traced and compiled: the same losses as eager
// over a few steps on Fashion-MNIST images, and one graph for every step.
#include <gtest/gtest.h>

#include "examples/cnn_model.h"
#include "lt/data.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/optim.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

std::vector<float> train(Mode mode, const data::TensorDataset& ds, int steps) {
  manual_seed(5);
  examples::Cnn model;
  optim::SGD opt(model.parameters(), {.lr = 0.02, .momentum = 0.9});
  data::BatchIterator batches(ds, {.batch_size = 16, .seed = 2});
  return testing::train_steps(
      opt, steps,
      [&](int) {
        const data::Batch b = batches.next().value();
        return cross_entropy(model.forward(reshape(b.images, {-1, 1, 28, 28})), b.labels);
      },
      {.mode = mode});
}

TEST(LazyCnn, SameLossesAsEager) {
  const data::TensorDataset ds =
      data::load_fashion_mnist(data::Split::Train, {.limit = 160, .normalize = true});
  const std::vector<float> eager = train(Mode::Eager, ds, 8);
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> lazy = train(Mode::Lazy, ds, 8);
  ASSERT_EQ(lazy.size(), 8u);
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_NEAR(lazy[i], eager[i], 1e-4 * std::abs(eager[i])) << "step " << i;
  EXPECT_EQ(metrics::counter("cache_miss"), 1);
  EXPECT_EQ(metrics::counter("sync"), 0);
}

}  // namespace
}  // namespace lt
