// How a rank writes a large collective's bytes into the shared segment, where the other ranks
// read them. Cached stores leave each line in this core's cache; the line is then also in the
// reader's, and the next write to it must first invalidate the reader's copy. Where the cores
// pass lines cheaply that costs little, and the reader finds the bytes in a cache; but a
// virtual machine may have stretches of seconds in which the same copy into the segment runs
// several times slower (perhaps as the hypervisor moves its cores). Streaming
// (non-temporal) stores write whole lines to memory without taking them into any cache: they
// cost the same in either stretch, and the reader fetches the bytes from memory.
//
// No one kind is faster everywhere, so by default each rank measures: it times the work of its
// part of every large collective (copying in, reducing its slice, copying out), estimates each
// kind's cost as the median of its last few measurements (one preempted copy must not flip the
// choice), and uses the cheaper one, trying the other one now and then so that its estimate
// follows the host. The kind changes how fast the bytes move, never which bytes: the
// results are the same either way.
#pragma once
#include <array>
#include <cstdint>

namespace lt::rt::comm {

enum class Stores { Cached, Streaming };
/// LT_SHM_STORES: measure and pick (Auto), or always one kind.
enum class StorePolicy { Auto, Cached, Streaming };

class StoreChoice {
 public:
  /// Every `kProbeEvery`-th large collective uses the kind that is not the cheaper one.
  static constexpr uint64_t kProbeEvery = 16;
  /// How many of a kind's latest measurements its estimate is the median of.
  static constexpr int kWindow = 5;

  explicit StoreChoice(StorePolicy policy = StorePolicy::Auto) : policy_(policy) {}
  StorePolicy policy() const { return policy_; }

  /// The stores for large collective `n` (0, 1, ... in start order, the same on every rank, so
  /// that the ranks try the other kind at the same collective).
  Stores pick(uint64_t n) const;
  /// A large collective written with `s` cost this rank `ns_per_byte` of work.
  void record(Stores s, double ns_per_byte);
  /// The estimate of `s` in ns per byte: the median of its last kWindow measurements (of an
  /// even number, the lower middle one), or a negative number before any.
  double estimate(Stores s) const;

 private:
  struct Window {
    std::array<double, kWindow> last{};
    int count = 0;  // measurements so far; the latest is last[(count - 1) % kWindow]
  };
  StorePolicy policy_;
  std::array<Window, 2> windows_;
  std::array<double, 2> cost_{-1.0, -1.0};  // the estimates
};

}  // namespace lt::rt::comm
