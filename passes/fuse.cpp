#include "passes/fuse.h"

#include <algorithm>
#include <set>
#include <functional>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "ir/error.h"

namespace lt::passes {
namespace {

using ir::Value;

bool loop_fusible(ir::Op op) { return ir::as_elementwise(op).has_value() || op == ir::Op::Expand; }

bool contains(std::span<const int> xs, int x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

// Groups under construction are the classes of a union-find over node ids, named by their root.
// The kernel DAG stays acyclic because every merge is checked first (acyclic()); the check is a
// forward search pruned by levels: each group's level exceeds the levels of the groups it reads,
// so a search never needs to go above the highest level of the groups it looks for.
class Fuser {
 public:
  Fuser(const ir::Graph& g, const FuseOptions& o)
      : g_(g),
        o_(o),
        n_(static_cast<int>(g.nodes().size())),
        parent_(n_),
        size_(n_, 1),
        level_(n_, 0),
        visited_(n_, 0),
        loop_(n_, 0),
        consumers_(n_) {
    for (int id = 0; id < n_; ++id) parent_[id] = id;
  }

  ir::FusionPlan run() {
    for (int id = 0; id < n_; ++id) place(id);
    merge_siblings();
    return emit();
  }

 private:
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  const Shape& shape(int id) const { return g_.node(id).types[0].shape; }
  bool fits(int size) const { return size <= o_.max_nodes_per_kernel; }

  void place(int id);
  bool acyclic(std::span<const int> set, std::span<const int> ext);
  int unite(int a, int b);
  void raise_levels(int root);
  void merge_siblings();
  ir::FusionPlan emit();

  const ir::Graph& g_;
  FuseOptions o_;
  int n_;
  std::vector<int> parent_, size_, level_, visited_;
  std::vector<char> loop_;                   // by root: a Loop group
  std::vector<std::vector<int>> consumers_;  // by root: groups reading it (may be stale: find())
  std::vector<int> stack_;
  int epoch_ = 0;
};

// Node `id` joins every producer loop group of its iteration shape that it legally can (greedy,
// operand order), merging them; otherwise it starts a group of its own.
void Fuser::place(int id) {
  const ir::Node& node = g_.node(id);
  std::vector<int> ins;  // distinct groups of the operands, in operand order
  for (Value v : node.inputs)
    if (!v.is_param() && !contains(ins, find(v.def))) ins.push_back(find(v.def));

  std::vector<int> set, ext;
  loop_[id] = loop_fusible(node.op);
  if (loop_[id]) {
    int size = 1;
    for (int r : ins) {
      if (!loop_[r] || shape(r) != shape(id) || !fits(size + size_[r])) continue;
      set.push_back(r);
      ext.clear();
      for (int e : ins)
        if (!contains(set, e)) ext.push_back(e);
      if (acyclic(set, ext))
        size += size_[r];
      else
        set.pop_back();
    }
  }
  int root = id;
  for (int r : set) root = unite(root, r);
  for (int r : ins) {
    if (find(r) == root) continue;
    level_[root] = std::max(level_[root], level_[r] + 1);
    consumers_[r].push_back(root);
  }
  raise_levels(root);
}

// Would merging the groups in `set` (plus a new node reading the groups in `ext`) close a cycle?
// It would exactly when some group outside `set` is reachable from `set` and leads back into
// `set` or is one of `ext`.
bool Fuser::acyclic(std::span<const int> set, std::span<const int> ext) {
  // The common case: one group and operands from no higher level, which nothing in it can reach.
  if (set.size() == 1 &&
      std::all_of(ext.begin(), ext.end(), [&](int e) { return level_[e] <= level_[set[0]]; }))
    return true;
  int top = 0;
  for (int r : set) top = std::max(top, level_[r]);
  for (int r : ext) top = std::max(top, level_[r]);
  ++epoch_;
  stack_.clear();
  for (int s : set)
    for (int c : consumers_[s])
      if (!contains(set, find(c))) stack_.push_back(find(c));
  while (!stack_.empty()) {
    const int r = stack_.back();
    stack_.pop_back();
    if (visited_[r] == epoch_) continue;
    visited_[r] = epoch_;
    if (contains(set, r) || contains(ext, r)) return false;
    if (level_[r] >= top) continue;  // every group it reaches lies above all the targets
    for (int c : consumers_[r]) stack_.push_back(find(c));
  }
  return true;
}

int Fuser::unite(int a, int b) {
  a = find(a);
  b = find(b);
  if (a == b) return a;
  if (size_[a] < size_[b]) std::swap(a, b);
  parent_[b] = a;
  size_[a] += size_[b];
  level_[a] = std::max(level_[a], level_[b]);
  loop_[a] = loop_[a] && loop_[b];
  if (consumers_[a].size() < consumers_[b].size()) consumers_[a].swap(consumers_[b]);
  consumers_[a].insert(consumers_[a].end(), consumers_[b].begin(), consumers_[b].end());
  std::vector<int>().swap(consumers_[b]);
  return a;
}

// Restores "a consumer's level exceeds its producer's" downstream of `root` after it rose.
void Fuser::raise_levels(int root) {
  stack_.assign(1, root);
  while (!stack_.empty()) {
    const int r = stack_.back();
    stack_.pop_back();
    LT_CHECK(level_[r] <= n_, "fuse: kernel levels grow without bound (a cycle at group %{})", r);
    for (int c : consumers_[r]) {
      c = find(c);
      if (c != r && level_[c] <= level_[r]) {
        level_[c] = level_[r] + 1;
        stack_.push_back(c);
      }
    }
  }
}

// Horizontal fusion: loop groups that read the same full-size value merge when no path joins
// them through another kernel, so the value is read once and one launch goes away.
void Fuser::merge_siblings() {
  const ir::ValueIndex index(g_);
  std::vector<std::vector<int>> readers(index.size());
  for (int id = 0; id < n_; ++id)
    for (Value v : g_.node(id).inputs) readers[index(v)].push_back(id);
  auto visit = [&](Value v) {
    const Shape& s = g_.type(v).shape;
    int acc = -1;
    for (int reader : readers[index(v)]) {
      const int r = find(reader);
      if (!loop_[r] || shape(r) != s) continue;
      if (acc < 0 || find(acc) == r) {
        acc = r;
        continue;
      }
      const int pair[2] = {find(acc), r};
      if (!fits(size_[pair[0]] + size_[r]) || !acyclic(pair, {})) continue;
      acc = unite(pair[0], r);
      raise_levels(acc);
    }
  };
  for (int p = 0; p < static_cast<int>(g_.params().size()); ++p) visit(Value::param(p));
  for (int id = 0; id < n_; ++id)
    for (int i = 0; i < g_.num_outputs(id); ++i) visit(Value::node(id, i));
}

// A topological order of the kernel DAG (`kernel[node]` numbers kernels by first node), ties
// broken by the lower number, so the plan reads close to trace order.
std::vector<int> schedule(const ir::Graph& g, std::span<const int> kernel, int num_kernels) {
  std::vector<std::vector<int>> succ(num_kernels);
  std::vector<int> indegree(num_kernels, 0);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) {
        succ[kernel[v.def]].push_back(kernel[id]);
        ++indegree[kernel[id]];
      }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int k = 0; k < num_kernels; ++k)
    if (indegree[k] == 0) ready.push(k);
  std::vector<int> order;
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int s : succ[k])
      if (--indegree[s] == 0) ready.push(s);
  }
  LT_CHECK(static_cast<int>(order.size()) == num_kernels, "fuse: the kernel graph has a cycle");
  return order;
}

ir::FusionPlan Fuser::emit() {
  std::vector<int> kernel(n_), number_of_root(n_, -1);
  std::vector<std::vector<int>> members;  // by kernel number: nodes in id order
  for (int id = 0; id < n_; ++id) {
    int& k = number_of_root[find(id)];
    if (k < 0) {
      k = static_cast<int>(members.size());
      members.emplace_back();
    }
    kernel[id] = k;
    members[k].push_back(id);
  }
  const std::vector<int> order = schedule(g_, kernel, static_cast<int>(members.size()));
  std::vector<int> position(order.size());
  ir::FusionPlan plan;
  for (int k : order) {
    position[k] = static_cast<int>(plan.groups.size());
    const int first = members[k].front();
    ir::FusionGroup& grp = plan.groups.emplace_back();
    grp.kind = loop_[find(first)] ? ir::KernelKind::Loop : ir::KernelKind::Library;
    if (grp.kind == ir::KernelKind::Loop) grp.shape = shape(first);
    grp.nodes = std::move(members[k]);
  }
  for (int& k : kernel) k = position[k];
  ir::fill_group_io(g_, kernel, plan.groups);
  return plan;
}

/// Re-orders the groups (Kahn's algorithm): among ready groups, those that check data at run time
/// first, then the original order. Dependencies stay satisfied, so inputs/outputs are unchanged.
void hoist_checking_groups(const ir::Graph& g, ir::FusionPlan& plan) {
  const int n = static_cast<int>(plan.groups.size());
  std::vector<int> group_of(g.nodes().size(), -1);
  std::vector<bool> checks(n, false);
  for (int k = 0; k < n; ++k)
    for (int id : plan.groups[k].nodes) {
      group_of[id] = k;
      checks[k] = checks[k] || ir::checks_data_at_run_time(g.node(id));
    }
  if (std::find(checks.begin(), checks.end(), true) == checks.end()) return;
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  for (int k = 0; k < n; ++k) {
    std::vector<int> deps;
    for (ir::Value v : plan.groups[k].inputs)
      if (!v.is_param()) deps.push_back(group_of[v.def]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int d : deps) users[d].push_back(k);
    pending[k] = static_cast<int>(deps.size());
  }
  // Ready groups by (does not check, original position): checking ones come out first.
  std::set<std::pair<bool, int>> ready;
  for (int k = 0; k < n; ++k)
    if (pending[k] == 0) ready.insert({!checks[k], k});
  std::vector<ir::FusionGroup> out;
  out.reserve(n);
  while (!ready.empty()) {
    const int k = ready.begin()->second;
    ready.erase(ready.begin());
    out.push_back(std::move(plan.groups[k]));
    for (int u : users[k])
      if (--pending[u] == 0) ready.insert({!checks[u], u});
  }
  plan.groups = std::move(out);
}

}  // namespace

ir::FusionPlan fuse(const ir::Graph& g, const FuseOptions& o) {
  ir::FusionPlan plan = o.enabled ? Fuser(g, o).run() : ir::unfused_plan(g);
  hoist_checking_groups(g, plan);
  return plan;
}

}  // namespace lt::passes
