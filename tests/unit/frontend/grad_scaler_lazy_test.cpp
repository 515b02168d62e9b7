// GradScaler in lazy mode: steps with an inf or a NaN run the same compiled graph as finite ones,
// nothing syncs, and parameters, optimizer state, scale and growth tracker end as in eager mode.
#include <gtest/gtest.h>

#include <vector>

#include "lt/amp.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/scaled_training.h"

namespace lt::amp {
namespace {

using testing::Grad;
using testing::TinyModel;

struct Result {
  std::map<std::string, std::vector<float>> values;
  float scale;
  int32_t tracker;
};

/// Ten AdamW steps with loss scaling (growth interval 3), an inf at step 2 and a NaN at step 6:
/// the scale backs off twice and grows twice.
Result train(Mode mode, int64_t* syncs) {
  TinyModel m;
  optim::AdamW opt(m.params(), {.lr = 0.05, .weight_decay = 0.1});
  GradScaler scaler({.init_scale = 1024, .growth_interval = 3});
  {
    ModeGuard guard(mode);
    for (int k = 0; k < 10; ++k) {
      testing::scaled_step(m, opt, scaler, k,
                           k == 2   ? Grad::Inf
                           : k == 6 ? Grad::NaN
                                    : Grad::Finite);
      if (mode == Mode::Lazy) mark_step();
    }
  }
  *syncs = metrics::counter("sync");
  return {testing::values(m, opt), scaler.get_scale().item<float>(),
          scaler.growth_tracker().item<int32_t>()};
}

TEST(ScalerLazy, BadStepsRunTheOneCompiledGraphWithoutASyncAndMatchEager) {
  int64_t syncs = 0;
  const Result eager = train(Mode::Eager, &syncs);
  clear_graph_cache();
  metrics::reset();
  const Result lazy = train(Mode::Lazy, &syncs);
  EXPECT_EQ(syncs, 0);
  EXPECT_EQ(metrics::counter("cache_miss"), 1);
  EXPECT_EQ(metrics::counter("cache_hit"), 9);
  // 1024 -> 512 (inf) -> 1024 (3 finite) -> 512 (NaN) -> 1024 (3 finite), tracker 0.
  EXPECT_EQ(eager.scale, 1024.0f);
  EXPECT_EQ(eager.tracker, 0);
  EXPECT_EQ(lazy.scale, eager.scale);
  EXPECT_EQ(lazy.tracker, eager.tracker);
  ASSERT_EQ(lazy.values.size(), eager.values.size());
  for (const auto& [name, want] : eager.values) {
    const std::vector<float>& got = lazy.values.at(name);
    ASSERT_EQ(got.size(), want.size()) << name;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << name << i;
  }
}

}  // namespace
}  // namespace lt::amp
