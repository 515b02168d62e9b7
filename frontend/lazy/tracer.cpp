// Lazy mode's core: tracing ops into LazyNodes, cutting the pending graph of live tensors into an
// ir::Graph, the graph cache, and materialization.
#include "frontend/lazy/tracer.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unordered_map>
#include <utility>

#include "frontend/dispatch.h"
#include "frontend/lazy/graph_cache.h"
#include "frontend/lazy/prepared_step.h"
#include "frontend/lazy/lazy_node.h"
#include "frontend/lazy/recompile_report.h"
#include "frontend/options/store.h"
#include "ir/dot.h"
#include "frontend/tensor_impl.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/options.h"

namespace lt {
namespace {

std::atomic<Mode> g_mode{Mode::Eager};
// Traced-op count: on the hot path, so an atomic flushed into metrics at each materialization
// rather than a metrics::count call (a map lookup under a mutex) per op.
std::atomic<int64_t> g_nodes_traced{0};

bool debug_on() { return options::enabled(options::Setting::Debug); }

struct DebugLog {
  std::vector<std::string> lines;
};
DebugLog& debug_log() {
  static DebugLog l;
  return l;
}
void log_line(std::string line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  debug_log().lines.push_back(std::move(line));
}

/// LT_DUMP_DIR: the traced IR and its Graphviz form, per graph prepared.
void dump_graph(const ir::Graph& g, uint64_t key, int64_t seq) {
  const std::string dir = options::text(options::Setting::DumpDir);
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  const std::string stem = fmt::format("{}/{:04}-{:016x}", dir, seq, key);
  std::ofstream(stem + ".traced.ir") << ir::print(g);
  std::ofstream(stem + ".dot") << ir::to_dot(g);
}

// Every tensor that held a pending value when it was made; dead or materialized entries are
// dropped when the list has doubled since the last sweep.
struct Registry {
  std::vector<std::weak_ptr<TensorImpl>> live;
  size_t sweep_at = 1024;
  int64_t pending_nodes = 0;  // traced since the last materialization
  bool warned = false;
};
Registry& registry() {
  static Registry r;
  return r;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The pending graph of some tensors, cut and hashed. The ir::Graph itself is built only when
/// needed (a cache miss, a dump, graph_text): a hit costs one walk over the pending nodes.
struct Cut {
  uint64_t hash = 0;
  std::vector<rt::BufferPtr> params;
  std::vector<const TensorType*> param_types;
  std::vector<LazyNode*> order;                    // nodes in post-order (graph node ids)
  std::vector<std::vector<ir::Value>> inputs;      // per node
  std::vector<ir::Value> result_values;
  std::vector<std::pair<LazyNode*, int>> results;  // (node, output) per graph result
  std::vector<ir::Donation> donations;
};

bool materialized(const LazyNode* n, int index) {
  return index < static_cast<int>(n->results.size()) && n->results[index];
}

uint64_t mix(uint64_t h, uint64_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
uint64_t mix_type(uint64_t h, const TensorType& t) {
  h = mix(h, static_cast<uint64_t>(t.dtype) + 1);
  for (int64_t d : t.shape) h = mix(h, static_cast<uint64_t>(d));
  return mix(h, t.shape.size());
}
uint64_t mix_value(uint64_t h, ir::Value v) {
  return mix(h, (uint64_t(uint32_t(v.def)) << 32) | uint32_t(v.index));
}

Cut cut(std::span<TensorImpl* const> targets) {
  Cut c;
  uint64_t h = 0x6c617a79ULL;
  std::unordered_map<const LazyNode*, int> ids;
  std::unordered_map<const rt::Buffer*, int> param_of;
  auto param = [&](const rt::BufferPtr& b, const TensorType& t) {
    auto [it, fresh] = param_of.try_emplace(b.get(), static_cast<int>(c.params.size()));
    if (fresh) {
      c.params.push_back(b);
      c.param_types.push_back(&t);
    }
    return ir::Value::param(it->second);
  };
  auto value_of = [&](const LazyInput& in) {
    if (!in.node) return param(in.data, in.type);
    if (materialized(in.node.get(), in.index)) return param(in.node->results[in.index], in.type);
    return ir::Value::node(ids.at(in.node.get()), in.index);
  };
  // Iterative post-order DFS: producers get smaller ids than their users.
  std::vector<std::pair<LazyNode*, size_t>> stack;
  for (TensorImpl* t : targets) {
    if (ids.count(t->lazy.get())) continue;
    stack.push_back({t->lazy.get(), 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        const LazyInput& in = n->inputs[i++];
        if (in.node && !materialized(in.node.get(), in.index) && !ids.count(in.node.get()))
          stack.push_back({in.node.get(), 0});
        continue;
      }
      std::vector<ir::Value> ins;
      ins.reserve(n->inputs.size());
      h = mix(h, static_cast<uint64_t>(n->op) + 0x1000);
      h = mix(h, ir::attrs_hash(n->attrs));
      for (const LazyInput& in : n->inputs) {
        ins.push_back(value_of(in));
        h = mix_value(h, ins.back());
      }
      for (const TensorType& t2 : n->types) h = mix_type(h, t2);
      ids[n] = static_cast<int>(c.order.size());
      c.order.push_back(n);
      c.inputs.push_back(std::move(ins));
      stack.pop_back();
    }
  }
  std::unordered_map<uint64_t, int> seen;
  for (TensorImpl* t : targets) {
    const ir::Value v = ir::Value::node(ids.at(t->lazy.get()), t->lazy_index);
    const uint64_t key = (uint64_t(uint32_t(v.def)) << 32) | uint32_t(v.index);
    if (seen.try_emplace(key, static_cast<int>(c.result_values.size())).second) {
      c.result_values.push_back(v);
      c.results.push_back({t->lazy.get(), t->lazy_index});
      h = mix_value(h, v);
    }
  }
  // In-place updates: a target rebound from device data that this graph reads as a parameter
  // may take over that buffer (one result per parameter).
  std::vector<bool> donated(c.params.size()), filled(c.result_values.size());
  for (TensorImpl* t : targets) {
    auto old = t->donor.lock();
    if (!old) continue;
    auto p = param_of.find(old.get());
    const int r = seen.at((uint64_t(uint32_t(ids.at(t->lazy.get()))) << 32) | uint32_t(t->lazy_index));
    if (p == param_of.end() || donated[p->second] || filled[r]) continue;
    if (c.params[p->second]->bytes() != t->type.bytes()) continue;
    donated[p->second] = filled[r] = true;
    c.donations.push_back({p->second, r});
    h = mix(h, (uint64_t(p->second) << 32) | uint32_t(r));
  }
  for (const TensorType* t : c.param_types) h = mix_type(h, *t);
  c.hash = mix(h, c.params.size());
  return c;
}

ir::Graph build_graph(const Cut& c) {
  ir::Graph g("step");
  for (const TensorType* t : c.param_types) g.add_param(*t);
  for (size_t i = 0; i < c.order.size(); ++i) {
    const LazyNode* n = c.order[i];
    g.add_typed(n->op, c.inputs[i], n->attrs, n->types, location_str(n->loc));
  }
  g.set_results(c.result_values);
  for (const ir::Donation& d : c.donations) g.add_donation(d);
  return g;
}

/// Executable::run's `owned_refs` for the donated parameters: the references to each donated
/// buffer that die with this step, namely the cut's own entry, the inputs of the graph's nodes
/// that read it as device data and the results of materialized nodes they read it from. Any
/// other reference (a tensor, a detached alias, a node outside this graph) makes run() refuse the
/// donation. Only at mark_step: every pending tensor is then a target, so no node of this graph
/// is traced into a later graph; after a sync of some tensors, a node still pending elsewhere may
/// run again later and read the old data.
std::vector<long> owned_refs(const Cut& c) {
  if (c.donations.empty()) return {};
  std::vector<long> refs(c.params.size(), 0);
  std::unordered_map<const rt::Buffer*, int> donated;
  for (const ir::Donation& d : c.donations) {
    donated[c.params[d.param].get()] = d.param;
    refs[d.param] = 1;
  }
  std::unordered_map<const LazyNode*, bool> counted;  // materialized producers, counted once
  for (const LazyNode* n : c.order)
    for (const LazyInput& in : n->inputs) {
      if (!in.node) {
        if (auto it = donated.find(in.data.get()); it != donated.end()) ++refs[it->second];
        continue;
      }
      if (!materialized(in.node.get(), in.index) || !counted.try_emplace(in.node.get(), true).second)
        continue;
      for (const rt::BufferPtr& b : in.node->results)
        if (auto it = donated.find(b.get()); it != donated.end()) ++refs[it->second];
    }
  return refs;
}

/// Runs the pending graph of `targets` and turns each into device data. `all_pending`: the
/// targets are every pending tensor (mark_step), so donated buffers may be written over.
void materialize(std::vector<TensorImpl*> targets, const std::string& cause, bool all_pending) {
  // Outputs already computed by an earlier graph need no new run.
  std::erase_if(targets, [](TensorImpl* t) {
    if (!materialized(t->lazy.get(), t->lazy_index)) return false;
    t->buffer = t->lazy->results[t->lazy_index];
    t->lazy.reset();
    t->donor.reset();
    return true;
  });
  if (int64_t n = g_nodes_traced.exchange(0)) metrics::count("nodes_traced", n);
  if (targets.empty()) return;
  const int64_t t0 = now_ns();
  Cut c = cut(targets);
  const CompileOptions options = compile_options();
  const uint64_t key = c.hash ^ lazy::environment_key(options);
  const int64_t t1 = now_ns();
  metrics::time_ns("build_and_hash", t1 - t0);
  metrics::count("nodes_in_graphs", static_cast<int64_t>(c.order.size()));
  lazy::GraphCache& cache = lazy::graph_cache();
  std::shared_ptr<lazy::PreparedStep> exe = cache.find(key);
  const bool hit = exe != nullptr;
  const size_t nodes = c.order.size();
  if (hit) {
    metrics::count("cache_hit");
  } else {
    metrics::count("cache_miss");
    const int64_t seq = metrics::counter("cache_miss");
    ir::Graph graph = build_graph(c);
    if (debug_on() && cache.size() > 0)
      log_line(fmt::format("lt: recompile #{} ({}): {}", seq - 1, cause,
                           lazy::explain_difference(graph, cache.graphs())));
    dump_graph(graph, key, seq);
    exe = lazy::PreparedStep::prepare(std::move(graph), options, key);
    cache.insert(key, exe);
  }
  const int64_t t2 = now_ns();
  metrics::time_ns(hit ? "cache_lookup" : "compile", t2 - t1);
  const std::vector<long> refs = all_pending ? owned_refs(c) : std::vector<long>{};
  const std::vector<rt::BufferPtr> out = exe->run(c.params, refs);
  const int64_t t3 = now_ns();
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
  for (TensorImpl* t : targets) {
    t->buffer = t->lazy->results[t->lazy_index];
    t->lazy.reset();
    t->donor.reset();
  }
  registry().pending_nodes = 0;
  if (debug_on())
    log_line(fmt::format("lt: {} graph={:016x} nodes={} params={} cache={} build+hash={:.1f}us "
                         "{}={:.3f}ms exec={:.3f}ms",
                         cause, key, nodes, c.params.size(),
                         hit ? "hit" : exe->disk_hit() ? "miss (disk hit)" : "miss", (t1 - t0) / 1e3,
                         hit ? "lookup" : "prepare", (t2 - t1) / 1e6, (t3 - t2) / 1e6));
}

}  // namespace

Mode mode() { return g_mode.load(); }
void set_mode(Mode m) {
  init();  // the settings are read before anything is traced
  g_mode.store(m);
}

namespace lazy {

bool tracing() { return g_mode.load() == Mode::Lazy; }

void track(const std::shared_ptr<TensorImpl>& impl) {
  Registry& r = registry();
  r.live.push_back(impl);
  if (r.live.size() >= r.sweep_at) {
    std::erase_if(r.live, [](const std::weak_ptr<TensorImpl>& w) {
      auto p = w.lock();
      return !p || !p->pending();
    });
    r.sweep_at = std::max<size_t>(1024, r.live.size() * 2);
  }
}

std::vector<Tensor> trace(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                          std::vector<TensorType> types, const Loc& loc) {
  auto node = std::make_shared<LazyNode>();
  node->op = op;
  node->attrs = attrs;
  node->loc = loc;
  node->inputs.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    TensorImpl* xi = x.impl();
    if (xi->pending()) node->inputs.push_back({xi->lazy, xi->lazy_index, nullptr, xi->type});
    else node->inputs.push_back({nullptr, 0, xi->buffer, xi->type});
  }
  node->types = types;
  std::vector<Tensor> outs;
  outs.reserve(types.size());
  for (size_t i = 0; i < types.size(); ++i) {
    auto impl = std::make_shared<TensorImpl>();
    impl->type = std::move(types[i]);
    impl->lazy = node;
    impl->lazy_index = static_cast<int>(i);
    track(impl);
    outs.emplace_back(std::move(impl));
  }
  g_nodes_traced.fetch_add(1, std::memory_order_relaxed);
  Registry& r = registry();
  const int64_t limit = options::number(options::Setting::MaxPendingNodes);
  if (++r.pending_nodes > limit && !r.warned) {
    r.warned = true;
    std::fprintf(stderr,
                 "lt: warning: %lld ops traced without lt::mark_step() (LT_MAX_PENDING_NODES=%lld); "
                 "the pending graph grows every step. Last op: %s at %s\n",
                 static_cast<long long>(r.pending_nodes), static_cast<long long>(limit),
                 std::string(ir::mnemonic(op)).c_str(), location_str(loc).c_str());
  }
  return outs;
}

void sync(const Tensor& t, std::string_view reason, const Loc& loc) {
  if (!t.impl()->pending()) return;
  const std::string where = fmt::format("{} at {}", reason, location_str(loc));
  metrics::count("sync");
  metrics::count("sync: " + where);
  materialize({t.impl()}, where, false);
}

}  // namespace lazy

void mark_step(Loc loc) {
  metrics::count("mark_step");
  Registry& r = registry();
  std::vector<std::shared_ptr<TensorImpl>> keep;  // alive for the duration of the step
  std::vector<TensorImpl*> targets;
  std::unordered_map<const TensorImpl*, bool> seen;  // a rebound tensor is registered again
  for (const auto& w : r.live)
    if (auto p = w.lock(); p && p->pending() && seen.try_emplace(p.get(), true).second) {
      targets.push_back(p.get());
      keep.push_back(std::move(p));
    }
  r.live.clear();
  r.sweep_at = 1024;
  try {
    materialize(targets, "mark_step at " + location_str(loc), true);
  } catch (...) {
    // A step that failed (a label out of range...) wrote nothing in place: kernels that check
    // data run before any donated write. Tensors updated in place get their old values back, so
    // parameters and optimizer state are as they were before the step; the rest stay pending.
    for (const auto& t : keep) {
      if (!t->pending()) continue;
      if (auto old = t->donor.lock()) {
        t->buffer = std::move(old);
        t->lazy.reset();
        t->donor.reset();
      } else {
        r.live.push_back(t);
      }
    }
    throw;
  }
}

void clear_graph_cache() { lazy::graph_cache().clear(); }

bool is_pending(const Tensor& t) { return t.defined() && t.impl()->pending(); }

Tensor constant(double value, DType dtype, Loc loc) {
  return apply1(ir::Op::Full, {}, ir::FullAttrs{{}, dtype, value}, loc);
}

namespace debug {
void set_enabled(bool on) { options::set_number(options::Setting::Debug, on); }
std::vector<std::string> take_log() { return std::exchange(debug_log().lines, {}); }
std::string graph_text(std::span<const Tensor> tensors) {
  std::vector<TensorImpl*> targets;
  for (const Tensor& t : tensors)
    if (is_pending(t)) targets.push_back(t.impl());
  if (targets.empty()) return "";
  return ir::print(build_graph(cut(targets)));
}
}  // namespace debug

}  // namespace lt
