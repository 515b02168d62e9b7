// Running pending work: mark_step() and value reads cut the pending graph, look it up in the
// graph cache (preparing it on a miss), run it and turn the targets into device data.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "frontend/lazy/cut.h"
#include "frontend/lazy/debug_log.h"
#include "frontend/lazy/donations.h"
#include "frontend/lazy/dumps.h"
#include "frontend/lazy/graph_agreement.h"
#include "frontend/lazy/graph_cache.h"
#include "frontend/lazy/live_tensors.h"
#include "frontend/lazy/prepared_step.h"
#include "frontend/lazy/recompile_report.h"
#include "frontend/lazy/tracer.h"
#include "frontend/views.h"
#include "ir/clock.h"
#include "ir/hash.h"
#include "lt/lazy.h"
#include "lt/metrics.h"

namespace lt {
namespace {

void become_device_data(TensorImpl* t) {
  t->buffer = t->lazy->results[t->lazy_index];
  t->lazy.reset();
  t->donor.reset();
  if (t->external) {
    if (t->buffer != t->external)
      std::memcpy(t->external->data(), t->buffer->data(), t->external->bytes());
    t->buffer = t->external;
  } else if (t->buffer->external()) {
    // A graph result that is another tensor's external memory (a parameter passed through):
    // this tensor gets its own copy, so that writes to that memory do not change it.
    std::shared_ptr<rt::Buffer> own = rt::Buffer::allocate(t->buffer->bytes());
    std::memcpy(own->data(), t->buffer->data(), own->bytes());
    t->buffer = std::move(own);
  }
}

/// Replaces each external parameter that is not 64-byte aligned (compiled kernels assume it)
/// by an aligned copy. Donated buffers are never external.
void align_params(std::vector<rt::BufferPtr>& params) {
  for (rt::BufferPtr& p : params)
    if (p && p->external() && reinterpret_cast<uintptr_t>(p->data()) % 64 != 0) {
      rt::BufferPtr copy = rt::Buffer::allocate(p->bytes());
      std::memcpy(copy->data(), p->data(), p->bytes());
      p = std::move(copy);
    }
}

/// Runs the pending graph of `targets` and turns each into device data. `all_pending`: the
/// targets are every pending tensor (mark_step), so donated buffers may be written over.
void materialize(std::vector<TensorImpl*> targets, const std::string& cause, bool all_pending) {
  // Outputs already computed by an earlier graph need no new run.
  std::erase_if(targets, [](TensorImpl* t) {
    if (!lazy::materialized(t->lazy.get(), t->lazy_index)) return false;
    become_device_data(t);
    return true;
  });
  if (int64_t n = lazy::take_traced_count()) metrics::count("nodes_traced", n);
  if (targets.empty()) return;
  const int64_t t0 = ir::now_ns();
  lazy::Cut c = lazy::cut(targets);
  const CompileOptions options = compile_options();
  const uint64_t key = ir::Hasher(c.hash).add(lazy::environment_key(options)).value();
  const int64_t t1 = ir::now_ns();
  metrics::time_ns("build_and_hash", t1 - t0);
  metrics::count("nodes_in_graphs", static_cast<int64_t>(c.order.size()));
  lazy::GraphCache& cache = lazy::graph_cache();
  std::shared_ptr<lazy::PreparedStep> exe = cache.find(key);
  const bool hit = exe != nullptr;
  if (hit) {
    metrics::count("cache_hit");
  } else {
    metrics::count("cache_miss");
    const int64_t seq = metrics::counter("cache_miss");
    ir::Graph graph = lazy::build_graph(c);
    if (lazy::debug_enabled() && cache.size() > 0)
      lazy::debug_line(fmt::format("lt: recompile #{} ({}): {}", seq - 1, cause,
                                   lazy::explain_difference(graph, cache.graphs())));
    lazy::dump_traced(graph, key, seq);
    exe = lazy::check_graph_agreement(graph, c.hash)
              ? lazy::prepare_on_every_rank(std::move(graph), options, key)
              : lazy::PreparedStep::prepare(std::move(graph), options, key);
    cache.insert(key, exe);
    if (const ir::MemoryReport* m = exe->memory()) {
      lazy::note_planned_peak(m->planned_peak_bytes());
      if (lazy::debug_enabled()) {
        std::string text = ir::print_memory_report(*m);
        text.pop_back();  // its newline
        lazy::debug_line(fmt::format("lt: graph={:016x} {}", key, text));
      }
    }
  }
  const int64_t t2 = ir::now_ns();
  metrics::time_ns(hit ? "cache_lookup" : "compile", t2 - t1);
  align_params(c.params);
  const std::vector<long> refs = all_pending ? lazy::owned_refs(c) : std::vector<long>{};
  const std::vector<rt::BufferPtr> out = exe->run(c.params, refs);
  const int64_t t3 = ir::now_ns();
  metrics::time_ns("execute", t3 - t2);
  metrics::count("graphs_run");
  if (!c.donations.empty()) {
    int64_t taken = 0;
    for (const ir::Donation& d : c.donations) taken += out[d.result] == c.params[d.param];
    metrics::count("donations_taken", taken);
    metrics::count("donations_refused", static_cast<int64_t>(c.donations.size()) - taken);
  }
  for (size_t k = 0; k < out.size(); ++k) {
    auto [node, index] = c.results[k];
    node->results.resize(node->types.size());
    node->results[index] = out[k];
  }
  for (TensorImpl* t : targets) become_device_data(t);
  lazy::reset_pending_count();
  if (lazy::debug_enabled())
    lazy::debug_line(fmt::format(
        "lt: {} graph={:016x} nodes={} params={} cache={} build+hash={:.1f}us {}={:.3f}ms "
        "exec={:.3f}ms",
        cause, key, c.order.size(), c.params.size(),
        hit ? "hit" : exe->disk_hit() ? "miss (disk hit)" : "miss", (t1 - t0) / 1e3,
        hit ? "lookup" : "prepare", (t2 - t1) / 1e6, (t3 - t2) / 1e6));
}

/// A sync of some tensors. A result copied into external storage overwrites data that pending
/// tensors outside the cut may still read, so a sync reaching such a result runs everything
/// pending, as mark_step does (without donations).
void sync_targets(std::vector<TensorImpl*> targets, const std::string& where) {
  if (std::ranges::none_of(targets, [](const TensorImpl* t) { return t->external != nullptr; })) {
    materialize(std::move(targets), where, false);
    return;
  }
  std::vector<std::shared_ptr<TensorImpl>> keep = lazy::take_pending_tensors();
  targets.clear();
  for (const auto& t : keep) targets.push_back(t.get());
  try {
    materialize(std::move(targets), where, false);
  } catch (...) {
    for (const auto& t : keep)
      if (t->pending()) lazy::track(t);
    throw;
  }
}

}  // namespace

namespace lazy {

void sync(const Tensor& t, std::string_view reason, const Loc& loc) {
  refresh(t);
  if (!t.impl()->pending()) return;
  const std::string where = fmt::format("{} at {}", reason, location_str(loc));
  metrics::count("sync");
  metrics::count("sync: " + where);
  sync_targets({t.impl()}, where);
}

void sync(std::span<const Tensor> ts, std::string_view reason, const Loc& loc) {
  std::vector<TensorImpl*> targets;
  // In the order given (the graph's results follow it, and so does its hash), each tensor once.
  for (const Tensor& t : ts) {
    if (t.defined()) refresh(t);
    if (t.defined() && t.impl()->pending() && std::ranges::find(targets, t.impl()) == targets.end())
      targets.push_back(t.impl());
  }
  if (targets.empty()) return;
  const std::string where = fmt::format("{} at {}", reason, location_str(loc));
  metrics::count("sync");
  metrics::count("sync: " + where);
  sync_targets(std::move(targets), where);
}

}  // namespace lazy

void mark_step(Loc loc) {
  metrics::count("mark_step");
  std::vector<std::shared_ptr<TensorImpl>> keep = lazy::take_pending_tensors();
  std::vector<TensorImpl*> targets;
  targets.reserve(keep.size());
  for (const auto& t : keep) targets.push_back(t.get());
  try {
    materialize(targets, "mark_step at " + location_str(loc), true);
  } catch (...) {
    // A step that failed (a label out of range...) wrote nothing in place: kernels that check
    // data run before any donated write. Tensors updated in place get their old values back, so
    // parameters and optimizer state are as they were before the step; the rest stay pending.
    for (const auto& t : keep) {
      if (!t->pending()) continue;
      if (t->external) {
        t->buffer = t->external;  // not written: results are copied in after the run
        t->lazy.reset();
      } else if (auto old = t->donor.lock()) {
        t->buffer = std::move(old);
        t->lazy.reset();
        t->donor.reset();
      } else {
        lazy::track(t);
      }
    }
    throw;
  }
}

void clear_graph_cache() { lazy::graph_cache().clear(); }

bool is_pending(const Tensor& t) { return t.defined() && t.impl()->pending(); }

namespace debug {
std::string graph_text(std::span<const Tensor> tensors) {
  std::vector<TensorImpl*> targets;
  for (const Tensor& t : tensors)
    if (is_pending(t)) targets.push_back(t.impl());
  if (targets.empty()) return "";
  return ir::print(lazy::build_graph(lazy::cut(targets)));
}
}  // namespace debug

}  // namespace lt
