// The choice between cached and streaming stores for the shared-memory all-reduce, fed with
// made-up measurements: it tries each kind once, then keeps to the cheaper one, and its probes of
// the other kind let it follow a host whose costs change.
#include <gtest/gtest.h>

#include "runtime/comm/store_choice.h"

namespace lt::rt::comm {
namespace {

TEST(StoreChoice, AFixedPolicyAlwaysGivesItsKind) {
  StoreChoice cached(StorePolicy::Cached), streaming(StorePolicy::Streaming);
  for (uint64_t n = 0; n < 40; ++n) {
    EXPECT_EQ(cached.pick(n), Stores::Cached) << n;
    EXPECT_EQ(streaming.pick(n), Stores::Streaming) << n;
    cached.record(Stores::Cached, 5.0);
    streaming.record(Stores::Streaming, 5.0);
  }
}

TEST(StoreChoice, TriesEachKindThenKeepsToTheCheaperAndProbesTheOther) {
  StoreChoice c;
  EXPECT_EQ(c.pick(0), Stores::Cached);
  EXPECT_LT(c.estimate(Stores::Cached), 0);
  c.record(Stores::Cached, 0.08);
  EXPECT_EQ(c.pick(1), Stores::Streaming);
  c.record(Stores::Streaming, 0.15);
  for (uint64_t n = 2; n < 50; ++n)
    EXPECT_EQ(c.pick(n), n % StoreChoice::kProbeEvery == StoreChoice::kProbeEvery - 1
                             ? Stores::Streaming
                             : Stores::Cached)
        << n;
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), 0.08);
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Streaming), 0.15);
}

TEST(StoreChoice, FollowsAHostWhoseCachedStoresTurnSlowAndFastAgain) {
  StoreChoice c;
  c.record(Stores::Cached, 0.08);
  c.record(Stores::Streaming, 0.15);
  // Cached stores turn 0.6 ns/byte: the estimate goes 0.08 + 0.25 (0.6 - 0.08) = 0.21, then
  // past 0.15 for good.
  uint64_t n = 2;
  c.record(c.pick(n++), 0.6);
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), 0.21);
  EXPECT_EQ(c.pick(n), Stores::Streaming);
  // Streaming from here, but every kProbeEvery-th collective measures cached stores, now cheap
  // again (0.07): from 0.21 the estimate falls below 0.15 after 2 probes (0.175, 0.149).
  int probes = 0;
  for (; c.pick(n) == Stores::Streaming || n % StoreChoice::kProbeEvery == 15; ++n) {
    const Stores s = c.pick(n);
    probes += s == Stores::Cached;
    c.record(s, s == Stores::Cached ? 0.07 : 0.15);
    ASSERT_LT(n, 200u);
  }
  EXPECT_EQ(probes, 2);
  EXPECT_NEAR(c.estimate(Stores::Cached), 0.14875, 1e-12);
}

}  // namespace
}  // namespace lt::rt::comm
