#include "frontend/lazy/live_tensors.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
#include <unordered_set>

#include "frontend/lazy/tracer.h"
#include "frontend/options/store.h"

namespace lt::lazy {
namespace {

// Dead or materialized entries are dropped when the list has doubled since the last sweep.
struct LiveTensors {
  std::vector<std::weak_ptr<TensorImpl>> live;
  size_t sweep_at = 1024;
  int64_t pending_nodes = 0;  // traced since the last materialization
  bool warned = false;
};
LiveTensors& live_tensors() {
  static LiveTensors r;
  return r;
}

std::atomic<int64_t> g_nodes_traced{0};

int64_t max_pending_nodes() { return options::number(options::Setting::MaxPendingNodes); }

}  // namespace

void track(const std::shared_ptr<TensorImpl>& impl) {
  LiveTensors& r = live_tensors();
  r.live.push_back(impl);
  if (r.live.size() >= r.sweep_at) {
    std::erase_if(r.live, [](const std::weak_ptr<TensorImpl>& w) {
      auto p = w.lock();
      return !p || !p->pending();
    });
    r.sweep_at = std::max<size_t>(1024, r.live.size() * 2);
  }
}

void count_traced(ir::Op op, const Loc& loc) {
  g_nodes_traced.fetch_add(1, std::memory_order_relaxed);
  LiveTensors& r = live_tensors();
  const int64_t limit = max_pending_nodes();
  if (++r.pending_nodes > limit && !r.warned) {
    r.warned = true;
    std::fprintf(
        stderr,
        "lt: warning: %lld ops traced without lt::mark_step() (LT_MAX_PENDING_NODES=%lld); "
        "the pending graph grows every step. Last op: %s at %s\n",
        static_cast<long long>(r.pending_nodes), static_cast<long long>(limit),
        std::string(ir::mnemonic(op)).c_str(), location_str(loc).c_str());
  }
}

int64_t take_traced_count() { return g_nodes_traced.exchange(0); }

void reset_pending_count() { live_tensors().pending_nodes = 0; }

std::vector<std::shared_ptr<TensorImpl>> take_pending_tensors() {
  LiveTensors& r = live_tensors();
  std::vector<std::shared_ptr<TensorImpl>> out;
  std::unordered_set<const TensorImpl*> seen;  // a rebound tensor is registered again
  for (const auto& w : r.live)
    if (auto p = w.lock(); p && p->pending() && seen.insert(p.get()).second)
      out.push_back(std::move(p));
  r.live.clear();
  r.sweep_at = 1024;
  return out;
}

}  // namespace lt::lazy
