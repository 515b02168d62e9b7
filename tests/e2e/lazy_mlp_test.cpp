// Lazy mode end to end: the same MLP training loop as the eager trainer, with lt::mark_step()
// after each optimizer step, gives the same losses as eager mode and compiles one graph for the
// whole run (lt::optim creates the momentum buffers at construction, so step 1 traces the same
// graph as every later step), hitting the cache every step although the learning rate changes.
#include <gtest/gtest.h>

#include <vector>

#include "examples/mlp_model.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

std::vector<float> train(Mode mode, const data::TensorDataset& train_set, int steps) {
  manual_seed(7);
  examples::Mlp model({784, 128, 10});
  constexpr double kLr = 0.05;
  optim::SGD opt(model.parameters(), {.lr = kLr, .momentum = 0.9});
  optim::sched::Scheduler sched(opt, optim::sched::CosineAnnealingLR(steps));
  data::BatchIterator batches(train_set, {.batch_size = 64, .seed = 3});
  return testing::train_steps(
      steps, [&](int) { return examples::train_step(model, opt, batches.next().value()); },
      {.mode = mode, .after_update = [&](int) { sched.step(); }});
}

TEST(LazyMlp, SameLossesAsEagerAndOneGraph) {
  const data::TensorDataset train_set =
      data::load_fashion_mnist(data::Split::Train, {.limit = 6400, .normalize = true});
  constexpr int kSteps = 100;
  const std::vector<float> eager = train(Mode::Eager, train_set, kSteps);
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> lazy = train(Mode::Lazy, train_set, kSteps);
  ASSERT_EQ(eager.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(lazy.size(), eager.size());
  for (int i = 0; i < kSteps; ++i)
    EXPECT_NEAR(lazy[i], eager[i], 1e-4 * std::abs(eager[i])) << "step " << i;
  EXPECT_LT(lazy.back(), 0.7 * lazy.front());
  EXPECT_EQ(metrics::counter("mark_step"), kSteps);
  EXPECT_EQ(metrics::counter("cache_miss"), 1);
  EXPECT_EQ(metrics::counter("cache_hit"), kSteps - 1);
  EXPECT_EQ(metrics::counter("sync"), 0);  // losses are read after mark_step materialized them
}

}  // namespace
}  // namespace lt
