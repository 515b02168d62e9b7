#include "runtime/comm/store_choice.h"

#include <algorithm>

namespace lt::rt::comm {
namespace {

Stores other(Stores s) { return s == Stores::Cached ? Stores::Streaming : Stores::Cached; }

}  // namespace

Stores StoreChoice::pick(uint64_t n) const {
  switch (policy_) {
    case StorePolicy::Cached: return Stores::Cached;
    case StorePolicy::Streaming: return Stores::Streaming;
    case StorePolicy::Auto: break;
  }
  // Each kind until it has an estimate, then the cheaper one.
  if (cost_[0] < 0) return Stores::Cached;
  if (cost_[1] < 0) return Stores::Streaming;
  const Stores best = cost_[1] < cost_[0] ? Stores::Streaming : Stores::Cached;
  return n % kProbeEvery == kProbeEvery - 1 ? other(best) : best;
}

void StoreChoice::record(Stores s, double ns_per_byte) {
  Window& w = windows_[static_cast<int>(s)];
  w.last[w.count++ % kWindow] = ns_per_byte;
  // Insertion sort of at most kWindow values (std::sort's unrolled prologue trips GCC 12's
  // -Warray-bounds on an array this short).
  std::array<double, kWindow> sorted{};
  const int n = std::min(w.count, kWindow);
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && sorted[j - 1] > w.last[i]; --j) sorted[j] = sorted[j - 1];
    sorted[j] = w.last[i];
  }
  cost_[static_cast<int>(s)] = sorted[(n - 1) / 2];
}

double StoreChoice::estimate(Stores s) const { return cost_[static_cast<int>(s)]; }

}  // namespace lt::rt::comm
