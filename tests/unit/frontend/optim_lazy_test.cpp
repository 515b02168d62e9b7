// Optimizers in lazy mode: a schedule compiles the step once (even through learning rates 0 and
// 1, which would be constants if they entered as plain scalars), gradient accumulation runs on a
// fixed set of graphs, and each parameter's update is one fused loop kernel.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "ir/parser.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"
#include "tests/support/train_steps.h"

namespace lt::optim {
namespace {

/// A 4-3-2 MLP with tanh; its parameters are f32 device data.
struct Mlp {
  Tensor w1, b1, w2, b2;
  Mlp() {
    manual_seed(11);
    w1 = (randn({3, 4}) * 0.5).requires_grad_();
    b1 = zeros({3}).requires_grad_();
    w2 = (randn({2, 3}) * 0.5).requires_grad_();
    b2 = zeros({2}).requires_grad_();
  }
  std::vector<Tensor> params() const { return {w1, b1, w2, b2}; }
  Tensor loss(const Tensor& x, const Tensor& y) const {
    const Tensor out = linear(tanh(linear(x, w1, b1)), w2, b2);
    return mean((out - y) * (out - y));
  }
};

/// Micro-batch i of a fixed data set.
std::pair<Tensor, Tensor> batch(int i) {
  ModeGuard eager(Mode::Eager);
  manual_seed(100 + static_cast<uint64_t>(i));
  return {randn({5, 4}), randn({5, 2})};
}

std::vector<float> flat(const std::vector<Tensor>& ts) {
  std::vector<float> out;
  for (const Tensor& t : ts) {
    const std::vector<float> v = t.to_vector<float>();
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

void expect_near(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], b[k], tol) << k;
}

/// Ten steps of SGD with momentum under warmup (from lr 0) + cosine, base lr 1 (so the rates
/// include exactly 0 and 1); returns the final parameters.
std::vector<float> scheduled_run(Mode mode) {
  Mlp m;
  SGD opt(m.params(), {.lr = 1.0, .momentum = 0.9});
  sched::Scheduler s(opt, sched::LinearWarmup(3, sched::CosineAnnealingLR(6, 0.1)));
  testing::train_steps(opt, 10,
                       [&](int t) {
                         const auto [x, y] = batch(t % 3);
                         return m.loss(x, y);
                       },
                       {.mode = mode, .after_update = [&](int) { s.step(); }});
  return flat(m.params());
}

TEST(OptimLazy, AScheduleCompilesTheStepOnce) {
  const std::vector<float> eager = scheduled_run(Mode::Eager);
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> lazy = scheduled_run(Mode::Lazy);
  EXPECT_EQ(metrics::counter("cache_miss"), 1);
  EXPECT_EQ(metrics::counter("cache_hit"), 9);
  EXPECT_EQ(metrics::counter("sync"), 0);
  expect_near(lazy, eager, 1e-5f);
}

/// Optimizer steps of AdamW over `micro` micro-batches each (the loss scaled by 1 / micro), with
/// gradient clipping; mark_step after every micro-batch. Returns the cache misses counted after
/// each optimizer step, and the final parameters in `out`.
std::vector<int64_t> accumulate(Mode mode, int steps, int micro, std::vector<float>& out) {
  Mlp m;
  AdamW opt(m.params(), {.lr = 0.01, .weight_decay = 0.1});
  std::vector<int64_t> misses;
  ModeGuard guard(mode);
  for (int t = 0; t < steps; ++t) {
    opt.zero_grad();
    for (int k = 0; k < micro; ++k) {
      const auto [x, y] = batch(t * micro + k);
      (m.loss(x, y) / static_cast<double>(micro)).backward();
      if (k + 1 == micro) {
        clip_grad_norm_(m.params(), 0.5);
        opt.step();
      }
      if (mode == Mode::Lazy) mark_step();
    }
    misses.push_back(metrics::counter("cache_miss"));
  }
  out = flat(m.params());
  return misses;
}

TEST(OptimLazy, GradientAccumulationRunsOnAFixedSetOfGraphs) {
  std::vector<float> eager, lazy;
  accumulate(Mode::Eager, 3, 4, eager);
  clear_graph_cache();
  metrics::reset();
  const std::vector<int64_t> misses = accumulate(Mode::Lazy, 3, 4, lazy);
  // The first micro-batch (gradients start from none), the middle ones (gradients accumulate)
  // and the last one with the update: three graphs, all made during the first optimizer step.
  EXPECT_EQ(misses, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_EQ(metrics::counter("graphs_run"), 12);
  EXPECT_EQ(metrics::counter("sync"), 0);
  expect_near(lazy, eager, 1e-5f);
}

TEST(OptimLazy, EachParametersUpdateIsOneLoopKernel) {
  Mlp m;
  AdamW opt(m.params(), {.lr = 0.01, .amsgrad = true});
  for (Tensor& p : m.params()) p.set_grad(ones_like(p) * 0.5);
  ModeGuard lazy(Mode::Lazy);
  opt.step();
  std::vector<Tensor> written = m.params();
  for (const auto& [name, t] : opt.state_dict().tensors) written.push_back(t);
  const ir::Graph traced = ir::parse(debug::graph_text(written));
  passes::PassLog log;
  const passes::LoweredGraph lowered = backends::cpu().lower(traced, {}, log);
  const std::string plan = ir::print_fusion_plan(lowered.graph, *lowered.fusion);
  // One loop kernel per parameter, writing the parameter and its three moments; the bias
  // corrections of all four (0-d math on the step counts) share one more.
  int param_kernels = 0, scalar_kernels = 0;
  for (const ir::FusionGroup& g : lowered.fusion->groups) {
    if (g.kind == ir::KernelKind::Library) continue;  // the constants 1 of the corrections
    ASSERT_EQ(g.kind, ir::KernelKind::Loop) << plan;
    if (g.shape.empty()) {
      ++scalar_kernels;
      continue;
    }
    ++param_kernels;
    EXPECT_EQ(g.outputs.size(), 4u) << plan;
  }
  EXPECT_EQ(param_kernels, 4) << plan;
  EXPECT_EQ(scalar_kernels, 1) << plan;
  mark_step();
}

}  // namespace
}  // namespace lt::optim
