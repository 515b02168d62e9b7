#include "frontend/lazy/cut.h"

#include <algorithm>
#include <unordered_map>

#include "ir/error.h"
#include "ir/structural_hash.h"

namespace lt::lazy {

Cut cut(std::span<TensorImpl* const> targets) {
  static uint64_t serial = 0;  // tracing is single-threaded, like the live-tensor list
  const uint64_t this_cut = ++serial;
  auto numbered = [&](const LazyNode* n) { return n->cut_serial == this_cut; };
  Cut c;
  ir::StructuralHasher h;
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
    return ir::Value::node(in.node->cut_id, in.index);
  };
  // The pending nodes the targets need (an iterative DFS), then numbered in trace order, which
  // is topological (a node is traced after its inputs): the graph lists the ops as the program
  // issued them, so the kernel order that follows it is the program's, where each gradient is
  // made next to the ones it was traced with (a DFS from the results would put every
  // parameter's gradient after the whole backward pass, keeping what it reads alive until then).
  std::vector<std::pair<LazyNode*, size_t>> stack;
  for (TensorImpl* t : targets) {
    if (numbered(t->lazy.get())) continue;
    stack.push_back({t->lazy.get(), 0});
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->inputs.size()) {
        const LazyInput& in = n->inputs[i++];
        if (in.node && !materialized(in.node.get(), in.index) && !numbered(in.node.get()))
          stack.push_back({in.node.get(), 0});
        continue;
      }
      n->cut_serial = this_cut;
      c.order.push_back(n);
      stack.pop_back();
    }
  }
  std::sort(c.order.begin(), c.order.end(), [](const LazyNode* a, const LazyNode* b) {
    return a->trace_serial < b->trace_serial;
  });
  for (size_t id = 0; id < c.order.size(); ++id) c.order[id]->cut_id = static_cast<int>(id);
  for (LazyNode* n : c.order) {
    const size_t begin = c.inputs.size();
    for (const LazyInput& in : n->inputs) c.inputs.push_back(value_of(in));
    h.node(n->op, n->attrs, std::span<const ir::Value>(c.inputs).subspan(begin), n->types);
  }
  std::unordered_map<uint64_t, int> seen;
  for (TensorImpl* t : targets) {
    const ir::Value v = ir::Value::node(t->lazy->cut_id, t->lazy_index);
    if (seen.try_emplace(ir::value_key(v), static_cast<int>(c.result_values.size())).second) {
      c.result_values.push_back(v);
      c.results.push_back({t->lazy.get(), t->lazy_index});
    }
  }
  h.results(c.result_values);
  std::vector<bool> donated(c.params.size()), filled(c.result_values.size());
  for (TensorImpl* t : targets) {
    auto old = t->donor.lock();
    if (!old) continue;
    auto p = param_of.find(old.get());
    const int r = seen.at(ir::value_key(ir::Value::node(t->lazy->cut_id, t->lazy_index)));
    if (p == param_of.end() || donated[p->second] || filled[r]) continue;
    if (c.params[p->second]->bytes() != t->type.bytes()) continue;
    donated[p->second] = filled[r] = true;
    c.donations.push_back({p->second, r});
  }
  h.donations(c.donations);
  c.hash = h.finish(c.params.size(), [&](size_t p) -> const TensorType& {
    return *c.param_types[p];
  });
  return c;
}

ir::Graph build_graph(const Cut& c) {
  ir::Graph g("step");
  for (const TensorType* t : c.param_types) g.add_param(*t);
  auto ins = c.inputs.begin();
  for (const LazyNode* n : c.order) {
    const auto end = ins + static_cast<std::ptrdiff_t>(n->inputs.size());
    g.add_typed(n->op, {ins, end}, n->attrs, n->types,
                n->loc_text.empty() ? location_str(n->loc) : n->loc_text);
    ins = end;
  }
  g.set_results(c.result_values);
  for (const ir::Donation& d : c.donations) g.add_donation(d);
  return g;
}

}  // namespace lt::lazy
