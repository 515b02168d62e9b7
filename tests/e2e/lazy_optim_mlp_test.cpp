// The library's training loop in lazy mode: an MLP written with raw tensors (two linear layers,
// ReLU, dropout), AdamW with decoupled weight decay on the weights only, a warmup-cosine
// schedule and gradient clipping, 50 steps. Lazy mode compiles nothing after the second step,
// never syncs inside the steps, and gives eager mode's losses.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

constexpr int kSteps = 50;
constexpr int kBatches = 5, kBatch = 32, kIn = 20, kHidden = 64, kClasses = 5;

struct Data {
  std::vector<Tensor> x, y;
  Data() {
    manual_seed(3);
    const Tensor teacher = randn({kIn, kClasses});
    for (int i = 0; i < kBatches; ++i) {
      x.push_back(randn({kBatch, kIn}));
      y.push_back(argmax(matmul(x.back(), teacher), 1));
    }
  }
};

struct TrainingRun {
  std::vector<float> losses;
  std::vector<int64_t> misses;  // cache misses counted after each step
  int64_t syncs = 0;            // inside the steps
};

TrainingRun train(Mode mode, const Data& data) {
  manual_seed(7);
  const auto uniform = [](Shape shape, double bound) {
    return ((rand(std::move(shape)) * 2.0 - 1.0) * bound).requires_grad_();
  };
  Tensor w1 = uniform({kHidden, kIn}, 1 / std::sqrt(kIn)), b1 = uniform({kHidden}, 0.1);
  Tensor w2 = uniform({kClasses, kHidden}, 1 / std::sqrt(kHidden)), b2 = uniform({kClasses}, 0.1);
  optim::AdamW opt({{{w1, w2}, {.lr = 2e-2, .weight_decay = 0.05}},
                    {{b1, b2}, {.lr = 2e-2, .weight_decay = 0}}});
  optim::sched::Scheduler schedule(
      opt, optim::sched::LinearWarmup(5, optim::sched::CosineAnnealingLR(kSteps - 6, 0.05)));
  TrainingRun run;
  metrics::reset();
  const auto loss_at = [&](int step) {
    const Tensor& x = data.x[step % kBatches];
    const Tensor h = dropout(relu(linear(x, w1, b1)), 0.1);
    return cross_entropy(linear(h, w2, b2), data.y[step % kBatches]);
  };
  const auto clip = [&](int) { optim::clip_grad_norm_({w1, b1, w2, b2}, 1.0); };
  run.losses = testing::train_steps(
      opt, kSteps, loss_at,
      {.mode = mode,
       .after_backward = clip,
       .after_update = [&](int) { schedule.step(); },
       .after_step = [&](int) { run.misses.push_back(metrics::counter("cache_miss")); }});
  // Reading the finished steps' losses syncs nothing, so this still counts the steps' own.
  run.syncs = metrics::counter("sync");
  return run;
}

TEST(LazyOptimMlp, AdamWScheduleClipDropoutCompilesOnceWithoutSyncsLikeEager) {
  const Data data;
  const TrainingRun eager = train(Mode::Eager, data);
  clear_graph_cache();
  const TrainingRun lazy = train(Mode::Lazy, data);
  ASSERT_EQ(lazy.losses.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) EXPECT_NEAR(lazy.losses[i], eager.losses[i], 1e-5) << i;
  EXPECT_LT(lazy.losses.back(), 0.5 * lazy.losses.front());  // it learns
  EXPECT_EQ(lazy.misses[1], lazy.misses.back());             // no compile after the second step
  EXPECT_EQ(lazy.misses.back(), 1);  // in fact the first graph is the only one
  EXPECT_EQ(lazy.syncs, 0);
}

}  // namespace
}  // namespace lt
