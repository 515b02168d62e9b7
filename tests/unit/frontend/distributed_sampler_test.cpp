// DistributedSampler against PyTorch's rules, worked by hand: padding by the first indices,
// drop_last, round-robin shares, the shuffled order shared by every rank, and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "lt/data.h"
#include "tests/support/error_of.h"

namespace lt::data {
namespace {

using Ids = std::vector<int64_t>;

Ids share(int64_t n, int64_t w, int64_t r, bool shuffle, bool drop_last, int64_t epoch = 0) {
  DistributedSampler s(n, {.num_replicas = w, .rank = r, .shuffle = shuffle, .seed = 9,
                           .drop_last = drop_last});
  s.set_epoch(epoch);
  return s.indices();
}

TEST(DistributedSampler, PadsWithTheFirstIndicesAndDealsRoundRobin) {
  // 10 examples on 3 ranks: 4 each, the order 0..9 padded with 0, 1.
  EXPECT_EQ(share(10, 3, 0, false, false), (Ids{0, 3, 6, 9}));
  EXPECT_EQ(share(10, 3, 1, false, false), (Ids{1, 4, 7, 0}));
  EXPECT_EQ(share(10, 3, 2, false, false), (Ids{2, 5, 8, 1}));
  // Fewer examples than ranks: the order repeats as often as needed.
  EXPECT_EQ(share(2, 5, 4, false, false), (Ids{0}));
  EXPECT_EQ(share(2, 5, 3, false, false), (Ids{1}));
}

TEST(DistributedSampler, DropLastCutsTheTail) {
  EXPECT_EQ(share(10, 3, 0, false, true), (Ids{0, 3, 6}));
  EXPECT_EQ(share(10, 3, 2, false, true), (Ids{2, 5, 8}));
  EXPECT_TRUE(share(2, 5, 0, false, true).empty());
}

TEST(DistributedSampler, RanksShareOneShuffledOrderThatTheEpochChanges) {
  const int64_t n = 101, w = 4;
  for (int64_t epoch : {0, 1}) {
    const Ids order = shuffled_indices(n, 9, epoch);
    Ids seen;
    for (int64_t r = 0; r < w; ++r) {
      const Ids mine = share(n, w, r, true, false, epoch);
      ASSERT_EQ(mine.size(), 26u);
      for (size_t i = 0; i < mine.size(); ++i)
        EXPECT_EQ(mine[i], order[(i * w + static_cast<size_t>(r)) % n]);
      seen.insert(seen.end(), mine.begin(), mine.end());
    }
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    EXPECT_EQ(seen.size(), static_cast<size_t>(n));  // every example, by some rank
  }
  EXPECT_NE(share(n, w, 1, true, false, 0), share(n, w, 1, true, false, 1));
}

TEST(DistributedSampler, BatchesCutTheShare) {
  DistributedSampler s(10, {.num_replicas = 3, .rank = 1, .shuffle = false});
  EXPECT_EQ(s.batches(3), (std::vector<Ids>{{1, 4, 7}, {0}}));
  EXPECT_EQ(s.batches(3, /*drop_last=*/true), (std::vector<Ids>{{1, 4, 7}}));
}

TEST(DistributedSampler, DefaultsToTheJobAndRejectsBadArguments) {
  DistributedSampler alone(7);  // a test process is a job of one rank
  EXPECT_EQ(alone.num_replicas(), 1);
  EXPECT_EQ(alone.rank(), 0);
  EXPECT_EQ(alone.num_samples(), 7);
  EXPECT_EQ(testing::error_of([] { DistributedSampler(10, {.num_replicas = 2, .rank = 2}); }),
            "DistributedSampler: rank 2 is not in [0, 2)");
  EXPECT_EQ(testing::error_of([] { DistributedSampler(-1); }),
            "DistributedSampler: dataset size -1 is negative");
  EXPECT_EQ(testing::error_of([] { DistributedSampler(4).batches(0); }),
            "DistributedSampler: batch size 0 must be >= 1");
}

}  // namespace
}  // namespace lt::data
