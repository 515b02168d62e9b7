#include "runtime/comm/store_choice.h"

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
  double& c = cost_[static_cast<int>(s)];
  c = c < 0 ? ns_per_byte : c + kWeight * (ns_per_byte - c);
}

double StoreChoice::estimate(Stores s) const { return cost_[static_cast<int>(s)]; }

}  // namespace lt::rt::comm
