// The CNN (convolutions, pooling, their gradients) traced and compiled: the same losses as eager
// over a few steps on Fashion-MNIST images, and one steady-state graph.
#include <gtest/gtest.h>

#include "examples/cnn_model.h"
#include "examples/sgd.h"
#include "lt/data.h"
#include "lt/lazy.h"
#include "lt/metrics.h"

namespace lt {
namespace {

std::vector<float> train(Mode mode, const data::Dataset& ds, int steps) {
  manual_seed(5);
  examples::Cnn model;
  examples::Sgd opt(model.parameters(), 0.02, 0.9);
  data::BatchIterator batches(ds, {.batch_size = 16, .seed = 2});
  std::vector<float> losses;
  ModeGuard guard(mode);
  while (auto b = batches.next()) {
    if (static_cast<int>(losses.size()) == steps) break;
    opt.zero_grad();
    Tensor loss = cross_entropy(model.forward(reshape(b->images, {-1, 1, 28, 28})), b->labels);
    loss.backward();
    opt.step();
    if (mode == Mode::Lazy) mark_step();
    losses.push_back(loss.item<float>());
  }
  return losses;
}

TEST(LazyCnn, SameLossesAsEager) {
  const data::Dataset ds =
      data::load_fashion_mnist(data::Split::Train, {.limit = 160, .normalize = true});
  const std::vector<float> eager = train(Mode::Eager, ds, 8);
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> lazy = train(Mode::Lazy, ds, 8);
  ASSERT_EQ(lazy.size(), 8u);
  for (size_t i = 0; i < eager.size(); ++i)
    EXPECT_NEAR(lazy[i], eager[i], 1e-4 * std::abs(eager[i])) << "step " << i;
  EXPECT_EQ(metrics::counter("cache_miss"), 2);
  EXPECT_EQ(metrics::counter("sync"), 0);
}

}  // namespace
}  // namespace lt
