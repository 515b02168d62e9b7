// The pieces a resumed run restores, each against the uninterrupted sequence it must continue:
// the data position (BatchIterator::seek), the generator (rng_state), and memory_stats.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "lt/data.h"
#include "lt/lt.h"
#include "lt/metrics.h"

namespace lt {
namespace {

data::TensorDataset numbered(int64_t n) {
  std::vector<float> x(static_cast<size_t>(n));
  std::vector<int64_t> y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = static_cast<float>(i);
    y[static_cast<size_t>(i)] = i;
  }
  return {from_vector(x, {n, 1}), from_vector(y, {n})};
}

TEST(ResumeState, SeekContinuesTheEpochsOrder) {
  const data::TensorDataset ds = numbered(50);
  data::BatchIterator straight(ds, {.batch_size = 8, .seed = 4});
  straight.start_epoch(3);
  std::vector<std::vector<int64_t>> want;
  while (auto b = straight.next()) want.push_back(b->labels.to_vector<int64_t>());
  ASSERT_EQ(want.size(), 7u);  // 6 full batches and one of 2
  for (int64_t k = 0; k <= 7; ++k) {
    data::BatchIterator resumed(ds, {.batch_size = 8, .seed = 4});
    resumed.start_epoch(3);
    resumed.seek(k);
    EXPECT_EQ(resumed.batch_index(), k);
    for (size_t i = static_cast<size_t>(k); i < want.size(); ++i) {
      auto b = resumed.next();
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ(b->labels.to_vector<int64_t>(), want[i]) << "seek " << k << ", batch " << i;
    }
    EXPECT_FALSE(resumed.next().has_value());
  }
}

TEST(ResumeState, SeekPastTheEpochNamesTheRange) {
  data::BatchIterator it(numbered(10), {.batch_size = 4});
  try {
    it.seek(4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                ::testing::StartsWith("BatchIterator::seek: batch 4 is not in [0, 3] at"));
  }
}

TEST(ResumeState, RestoredGeneratorDrawsTheSameValues) {
  manual_seed(17);
  (void)rand({5});
  const RngState saved = rng_state();
  const std::vector<float> a = randn({33}).to_vector<float>();
  const std::vector<float> a2 = rand({7}).to_vector<float>();
  manual_seed(99);  // anything in between
  (void)rand({3});
  set_rng_state(saved);
  EXPECT_EQ(randn({33}).to_vector<float>(), a);
  EXPECT_EQ(rand({7}).to_vector<float>(), a2);
  EXPECT_EQ(saved.seed, 17u);
  EXPECT_GT(saved.counter, 0u);
}

TEST(ResumeState, MemoryStatsCountLiveTensors) {
  reset_peak_memory();
  const MemoryStats before = memory_stats();
  {
    const Tensor big = zeros({1 << 20});  // 4 MiB
    const MemoryStats during = memory_stats();
    EXPECT_GE(during.current_bytes - before.current_bytes, int64_t{4} << 20);
    EXPECT_GE(during.peak_bytes, during.current_bytes);
  }
  EXPECT_GE(memory_stats().peak_bytes - before.current_bytes, int64_t{4} << 20);
}

}  // namespace
}  // namespace lt
