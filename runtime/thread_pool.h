// The runtime's worker threads. Kernels split large loops with parallel_for; the calling thread
// works too, and a parallel_for inside a worker runs inline (no nested oversubscription).
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

namespace lt::rt {

/// Threads used by parallel_for: every core until set_num_threads (the frontend passes
/// LT_NUM_THREADS down).
int num_threads();
/// Changes the thread count (benchmarks compare 1 vs 2). n >= 1.
void set_num_threads(int n);
/// Microseconds an idle worker polls for the next parallel_for, and the caller for the workers to
/// finish, before sleeping (the frontend passes LT_SPIN_US down; 0 sleeps at once).
void set_spin_us(int64_t us);
int64_t spin_us();

using RangeFn = void (*)(void* ctx, int64_t begin, int64_t end);
void parallel_for_impl(int64_t n, int64_t grain, RangeFn fn, void* ctx);

/// Calls f(begin, end) over disjoint chunks covering [0, n); chunks hold at least `grain` items.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_for_impl(
      n, grain, [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); },
      const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace lt::rt
