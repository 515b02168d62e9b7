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
  std::vector<Tensor> losses;
  metrics::reset();
  {
    ModeGuard guard(mode);
    for (int step = 0; step < kSteps; ++step) {
      opt.zero_grad();
      const Tensor& x = data.x[step % kBatches];
      const Tensor h = dropout(relu(linear(x, w1, b1)), 0.1);
      const Tensor loss = cross_entropy(linear(h, w2, b2), data.y[step % kBatches]);
      loss.backward();
      optim::clip_grad_norm_({w1, b1, w2, b2}, 1.0);
      opt.step();
      schedule.step();
      losses.push_back(loss.detach());
      if (mode == Mode::Lazy) mark_step();
      run.misses.push_back(metrics::counter("cache_miss"));
    }
  }
  run.syncs = metrics::counter("sync");
  for (const Tensor& l : losses) run.losses.push_back(l.item<float>());  // after the counted run
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
