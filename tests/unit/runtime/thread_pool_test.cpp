// The thread pool that kernels split their loops over: every index runs exactly once, whether
// the workers are polling for the next job (jobs back to back), asleep (jobs after a pause longer
// than the polling time, or no polling at all), or more numerous than the cores.
#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace lt::rt {
namespace {

// Restores the process's pool settings after a test.
struct PoolSettings {
  PoolSettings() : threads(num_threads()), spin(spin_us()) {}
  ~PoolSettings() {
    set_num_threads(threads);
    set_spin_us(spin);
  }
  int threads;
  int64_t spin;
};

// Runs `jobs` parallel_fors over n indices, calling `between` after each, and checks that each
// index of each job ran once.
template <class F>
void expect_every_index_once(int jobs, int64_t n, F&& between) {
  std::vector<std::atomic<int>> hits(n);
  for (int j = 0; j < jobs; ++j) {
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
    parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "job " << j << " index " << i;
    between(j);
  }
}

TEST(ThreadPool, BackToBackJobsWhileWorkersPoll) {
  PoolSettings saved;
  for (int threads : {2, 4}) {  // 4: more threads than this host may have cores
    set_num_threads(threads);
    set_spin_us(100);
    expect_every_index_once(5000, 37, [](int) {});
  }
}

TEST(ThreadPool, JobsAfterWorkersFellAsleep) {
  PoolSettings saved;
  set_num_threads(3);
  set_spin_us(50);
  // Every fifth job comes after a pause past the polling time, so the workers sleep and are
  // woken; the others come while they poll.
  expect_every_index_once(200, 101, [](int j) {
    if (j % 5 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  set_spin_us(0);  // never poll: every job wakes sleeping workers
  expect_every_index_once(500, 101, [](int) {});
  EXPECT_EQ(spin_us(), 0);
  // And they do wake: with chunks slow enough that the caller cannot take them all first, other
  // threads than the caller's run some.
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> by_workers{0};
  for (int j = 0; j < 20; ++j)
    parallel_for(6, 1, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(300));
      if (std::this_thread::get_id() != caller) by_workers.fetch_add(1);
    });
  EXPECT_GT(by_workers.load(), 0);
}

TEST(ThreadPool, NestedLoopsRunInlineAndComplete) {
  PoolSettings saved;
  set_num_threads(2);
  std::atomic<int64_t> sum{0};
  parallel_for(8, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      parallel_for(100, 1, [&](int64_t ib, int64_t ie) {
        for (int64_t k = ib; k < ie; ++k) sum.fetch_add(i * 100 + k);
      });
  });
  EXPECT_EQ(sum.load(), 799 * 800 / 2);
}

}  // namespace
}  // namespace lt::rt
