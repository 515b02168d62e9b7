// GradScaler on replicas: when only one rank's gradients hold an inf, every rank skips the step
// and halves its scale (the inf check is all-reduced in the graph), so the replicas stay
// identical. Started by lt-launch -n 2 (tests/CMakeLists.txt) or alone as a job of one rank, in
// which the one rank is the one that sees the inf.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "lt/lt.h"
#include "tests/dist/dist_main.h"
#include "tests/support/scaled_training.h"

namespace lt {
namespace {

using testing::Grad;
using testing::TinyModel;

constexpr int kSteps = 6, kBadStep = 2;

/// Each rank trains on its own batches, all-reduces the gradients, and only then does the last
/// rank's gradient get an inf: the other ranks' gradients stay finite, so only the scaler's
/// all-reduced check can make them skip.
void check_one_ranks_inf_skips_every_rank(Mode mode) {
  ASSERT_EQ(dist::world_size(), testing::expected_world());
  TinyModel m;
  optim::Adam opt(m.params(), {.lr = 0.05});
  amp::GradScaler scaler({.init_scale = 1024, .growth_interval = 3});
  const bool sees_inf = dist::rank() == dist::world_size() - 1;
  std::vector<float> scales;
  metrics::reset();
  for (int k = 0; k < kSteps; ++k) {
    const auto before = testing::values(m, opt);
    {
      ModeGuard guard(mode);
      opt.zero_grad();
      scaler.scale(m.loss(testing::scaled_batch(100 * dist::rank() + k))).backward();
      dist::all_reduce_gradients(m.params());
      testing::inject(m, k == kBadStep && sees_inf ? Grad::Inf : Grad::Finite);
      scaler.step(opt);
      scaler.update();
      if (mode == Mode::Lazy) mark_step();
    }
    if (k == kBadStep) EXPECT_EQ(testing::values(m, opt), before) << "rank " << dist::rank();
    else EXPECT_NE(testing::values(m, opt), before) << "rank " << dist::rank() << " step " << k;
    scales.push_back(scaler.get_scale().item<float>());
  }
  EXPECT_EQ(metrics::counter("sync"), 0);  // the reads above are of a finished step's data
  // The inf halves the scale on every rank; three finite steps later it grows back.
  EXPECT_EQ(scales, (std::vector<float>{1024, 1024, 512, 512, 512, 1024}))
      << "rank " << dist::rank();
  // Replicas end bit-identical.
  for (const Tensor& p : m.params()) {
    const std::vector<float> all = dist::all_gather(p).to_vector<float>();
    const size_t n = static_cast<size_t>(p.numel());
    for (int r = 1; r < dist::world_size(); ++r)
      EXPECT_EQ(std::memcmp(all.data(), all.data() + r * n, n * sizeof(float)), 0) << "rank " << r;
  }
}

TEST(GradScalerDist, OneRanksInfSkipsEveryRankEager) {
  check_one_ranks_inf_skips_every_rank(Mode::Eager);
}
TEST(GradScalerDist, OneRanksInfSkipsEveryRankLazy) {
  check_one_ranks_inf_skips_every_rank(Mode::Lazy);
}

}  // namespace
}  // namespace lt
