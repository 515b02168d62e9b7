// Lazy mode end to end: the same MLP training loop as the eager trainer, with lt::mark_step()
// after each optimizer step, gives the same losses as eager mode, compiles one graph for the
// first step and one for the steady state (step 1 creates the momentum buffers: a different
// graph by design), and then hits the cache every step although the learning rate changes.
#include <gtest/gtest.h>

#include <vector>

#include "examples/mlp_model.h"
#include "lt/lazy.h"
#include "lt/metrics.h"

namespace lt {
namespace {

std::vector<float> train(Mode mode, const data::Dataset& train_set, int steps) {
  manual_seed(7);
  examples::Mlp model({784, 128, 10});
  constexpr double kLr = 0.05;
  examples::Sgd opt(model.parameters(), kLr, /*momentum=*/0.9);
  data::BatchIterator batches(train_set, {.batch_size = 64, .seed = 3});
  std::vector<float> losses;
  ModeGuard guard(mode);
  while (auto b = batches.next()) {
    if (static_cast<int>(losses.size()) == steps) break;
    opt.set_lr(examples::cosine_lr(kLr, static_cast<int64_t>(losses.size()), steps));
    Tensor loss = examples::train_step(model, opt, *b);
    if (mode == Mode::Lazy) mark_step();
    losses.push_back(loss.item<float>());
  }
  return losses;
}

TEST(LazyMlp, SameLossesAsEagerAndOneSteadyStateGraph) {
  const data::Dataset train_set =
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
  EXPECT_EQ(metrics::counter("cache_miss"), 2);  // step 1, then the steady-state step
  EXPECT_EQ(metrics::counter("cache_hit"), kSteps - 2);
  EXPECT_EQ(metrics::counter("sync"), 0);  // losses are read after mark_step materialized them
}

}  // namespace
}  // namespace lt
