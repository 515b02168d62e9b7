// The choice between cached and streaming stores for the shared-memory all-reduce, fed with
// made-up measurements: it tries each kind once, then keeps to the cheaper one; one slow
// measurement does not move it, and its probes of the other kind let it follow a host whose
// costs change.
#include <gtest/gtest.h>

#include "runtime/comm/store_choice.h"

namespace lt::rt::comm {
namespace {

constexpr uint64_t kProbe = StoreChoice::kProbeEvery;

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
    EXPECT_EQ(c.pick(n), n % kProbe == kProbe - 1 ? Stores::Streaming : Stores::Cached) << n;
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), 0.08);
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Streaming), 0.15);
}

TEST(StoreChoice, TheEstimateIsTheMedianOfTheLatestMeasurements) {
  StoreChoice c;
  const double cached[] = {0.3, 0.1, 0.2, 9.0, 0.15, 0.12, 0.11};
  // After each: the median of the last (up to) 5, the lower middle one of an even number.
  const double want[] = {0.3, 0.1, 0.2, 0.2, 0.2, 0.15, 0.15};
  for (int i = 0; i < 7; ++i) {
    c.record(Stores::Cached, cached[i]);
    EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), want[i]) << i;
  }
  EXPECT_LT(c.estimate(Stores::Streaming), 0);  // the kinds keep their own measurements
}

TEST(StoreChoice, OneSlowMeasurementDoesNotSwitchButASlowStretchDoes) {
  StoreChoice c;
  uint64_t n = 0;
  for (; n < 6; ++n) c.record(c.pick(n), c.pick(n) == Stores::Cached ? 0.08 : 0.15);
  ASSERT_EQ(c.pick(n), Stores::Cached);
  c.record(c.pick(n++), 5.0);  // a copy preempted by the host
  EXPECT_EQ(c.pick(n), Stores::Cached);
  // Cached stores turn slow for good (0.6 ns/byte): the third slow one in the window of five
  // moves the median.
  c.record(c.pick(n++), 0.6);
  EXPECT_EQ(c.pick(n), Stores::Cached);
  c.record(c.pick(n++), 0.6);
  EXPECT_EQ(c.pick(n), Stores::Streaming);
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), 0.6);
}

TEST(StoreChoice, ProbesBringItBackWhenCachedStoresTurnCheapAgain) {
  StoreChoice c;
  for (int i = 0; i < 5; ++i) c.record(Stores::Cached, 0.6);
  c.record(Stores::Streaming, 0.15);
  // Streaming now; every kProbe-th collective measures cached stores, cheap again (0.07):
  // the third such probe makes them the median of the window.
  uint64_t n = 0;
  int probes = 0;
  for (; c.pick(n) == Stores::Streaming || n % kProbe == kProbe - 1; ++n) {
    const Stores s = c.pick(n);
    probes += s == Stores::Cached;
    c.record(s, s == Stores::Cached ? 0.07 : 0.15);
    ASSERT_LT(n, 200u);
  }
  EXPECT_EQ(probes, 3);
  EXPECT_EQ(n, 3 * kProbe);  // the collective after the third probe
  EXPECT_DOUBLE_EQ(c.estimate(Stores::Cached), 0.07);
}

}  // namespace
}  // namespace lt::rt::comm
