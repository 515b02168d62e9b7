#include "passes/fuse.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/kernel_rules.h"
#include "ir/loop_kernel.h"
#include "ir/read_map.h"
#include "passes/kernel_order.h"

namespace lt::passes {
namespace {

using ir::Value;

bool contains(std::span<const int> xs, int x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

/// What a group under construction is.
enum class Kind : uint8_t {
  Library,  // one node run by its eager kernel
  Views,    // views only, waiting for a consumer to fold them in; alone, each is a library node
  Loop,     // a loop kernel over iter_[root]
};

/// How a node may take part in a loop kernel.
enum class NodeClass : uint8_t { Library, Compute, Reduction, View };

// Groups under construction are the classes of a union-find over node ids, named by their root.
// The kernel DAG stays acyclic because every merge is checked first (acyclic()); the check is a
// forward search pruned by levels: each group's level exceeds the levels of the groups it reads,
// so a search never needs to go above the highest level of the groups it looks for. Every merge
// into a loop kernel is also checked against the loop kernel contract and the backend's rules
// (holds()).
class Fuser {
 public:
  Fuser(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o)
      : g_(g),
        rules_(rules),
        o_(o),
        n_(static_cast<int>(g.nodes().size())),
        parent_(n_),
        size_(n_, 1),
        level_(n_, 0),
        visited_(n_, 0),
        kind_(n_, Kind::Library),
        copy_only_(n_, 0),
        iter_(n_),
        members_(n_),
        consumers_(n_),
        uses_(n_, 0),
        user_(n_, -1),
        donor_of_(n_, -1),
        donated_(g.params().size(), 0) {
    for (int id = 0; id < n_; ++id) {
      parent_[id] = id;
      members_[id] = {id};
      for (Value v : g.node(id).inputs)
        if (!v.is_param()) {
          ++uses_[v.def];
          user_[v.def] = id;
        }
    }
    for (Value v : g.results())
      if (!v.is_param()) ++uses_[v.def];
    for (const ir::Donation& d : g.donations()) {
      donated_[d.param] = 1;
      const Value v = g.results()[d.result];
      if (!v.is_param()) donor_of_[v.def] = d.param;
    }
  }

  /// Producer-consumer fusion.
  ir::FusionPlan partition() {
    for (int id = 0; id < n_; ++id) place(id);
    return emit();
  }

  /// The copy kernels of the view chains of `plan`, a partition fuse() made.
  ir::FusionPlan copy_view_chains_of(const ir::FusionPlan& plan) {
    load(plan, "fuse_view_chains");
    rebuild_view_chains();
    promote_view_chains();
    return emit();
  }

  /// Horizontal fusion of `plan`, a partition fuse() made.
  ir::FusionPlan merge_siblings_of(const ir::FusionPlan& plan) {
    load(plan, "fuse_siblings");
    merge_siblings();
    return emit();
  }

 private:
  int find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  bool fits(int size) const { return size <= o_.max_nodes_per_kernel; }
  bool has_loop(std::span<const int> set) const {
    return std::any_of(set.begin(), set.end(), [&](int r) { return kind_[r] == Kind::Loop; });
  }
  NodeClass classify(int id) const;

  void place(int id);
  bool joinable(int id, NodeClass c, int r);
  Shape iteration_shape(int id, NodeClass c, std::span<const int> set) const;
  bool holds(std::span<const int> set, int id, const Shape& iter);  // id < 0: no new node
  bool view_chain_folds(std::span<const int> set, int id);
  bool acyclic(std::span<const int> set, std::span<const int> ext);
  int unite(int a, int b);
  void raise_levels(int root);
  void merge_siblings();
  void rebuild_view_chains();
  void promote_view_chains();
  void load(const ir::FusionPlan& plan, std::string_view stage);
  ir::FusionPlan emit();

  const ir::Graph& g_;
  const ir::KernelRules& rules_;
  FuseOptions o_;
  int n_;
  std::vector<int> parent_, size_, level_, visited_;
  std::vector<Kind> kind_;                   // by root
  std::vector<char> copy_only_;              // by root: a view chain's copy kernel
  std::vector<Shape> iter_;                  // by root: a Loop group's iteration shape
  std::vector<std::vector<int>> members_;    // by root: node ids, ascending
  std::vector<std::vector<int>> consumers_;  // by root: groups reading it (may be stale: find())
  std::vector<int> uses_;                    // by node: reads of its value, results included
  std::vector<int> user_;                    // by node: its last reader (the only one if uses_ 1)
  std::vector<int> donor_of_;                // by node: the parameter donated to its value
  std::vector<char> donated_;                // by parameter
  std::vector<int> stack_;
  int epoch_ = 0;
};

NodeClass Fuser::classify(int id) const {
  switch (ir::info(g_.node(id).op).loop) {
    case ir::LoopForm::Elementwise:
      return rules_.computes(g_, id) ? NodeClass::Compute : NodeClass::Library;
    case ir::LoopForm::Reduction:
      return rules_.loop_reduction(g_, id) ? NodeClass::Reduction : NodeClass::Library;
    case ir::LoopForm::IndexMap: return NodeClass::View;
    case ir::LoopForm::None: return NodeClass::Library;
  }
  return NodeClass::Library;
}

// Whether node `id` may try to join group `r` (one of its operands' groups) at all: a view joins
// the view chains it reads through single-use links, and loop kernels (as an alias or a further
// folded view, which holds() decides); compute nodes and reductions join loop kernels and the
// view chains they read.
bool Fuser::joinable(int id, NodeClass c, int r) {
  const ir::Node& n = g_.node(id);
  if (kind_[r] == Kind::Library) return false;
  if (c == NodeClass::View) {
    if (kind_[r] == Kind::Loop) return true;
    return std::all_of(n.inputs.begin(), n.inputs.end(), [&](Value v) {
      return v.is_param() || find(v.def) != r || uses_[v.def] == 1;
    });
  }
  return true;
}

// The iteration shape of the kernel that node `id` would form with the groups in `set`.
Shape Fuser::iteration_shape(int id, NodeClass c, std::span<const int> set) const {
  for (int r : set)
    if (kind_[r] == Kind::Loop) return iter_[r];
  const ir::Node& n = g_.node(id);
  return c == NodeClass::Reduction ? g_.type(n.inputs[0]).shape : n.types[0].shape;
}

// Would the groups in `set` plus node `id` form a valid loop kernel over `iter`? The contract is
// ir::verify_fusion_plan's (ir::loop_roles; the nodes' classes have the rules' say on which
// compute nodes and reductions may join), plus the rules' cost rule on reads through views
// (KernelRules::folds_view), plus what keeps it true whatever comes later: a
// folded view that the kernel may have to write (read more than once, or by a node outside it)
// has the iteration shape; no view folds a donated parameter (its buffer may be written in
// place, element by element); and no reduction result (or alias of one) takes over the buffer
// of a parameter the kernel reads (it is written at other indices than the ones read: a bool
// [3,4,7] parameter has the bytes of a f32 [3,7] sum).
bool Fuser::holds(std::span<const int> set, int id, const Shape& iter) {
  std::vector<int> nodes;
  if (id >= 0) nodes.push_back(id);
  for (int r : set) nodes.insert(nodes.end(), members_[r].begin(), members_[r].end());
  std::sort(nodes.begin(), nodes.end());
  auto outside = [&](Value v) {
    return v.is_param() || (v.def != id && !contains(set, find(v.def)));
  };
  const std::vector<ir::LoopRole> roles = ir::loop_roles(g_, nodes);
  std::optional<ir::Ints> axes;
  int reductions = 0;
  auto role_of = [&](Value v) -> std::optional<ir::LoopRole> {
    if (outside(v)) return std::nullopt;
    return roles[std::lower_bound(nodes.begin(), nodes.end(), v.def) - nodes.begin()];
  };
  // What a node of the iteration shape reads from outside broadcasts to it (type rules): only
  // reads through views need their maps worked out.
  auto reads = [&](Value v) {
    const auto role = role_of(v);
    if (!role || role == ir::LoopRole::Compute) return true;
    if (role == ir::LoopRole::Alias || role == ir::LoopRole::Reduction) return false;
    const auto map = ir::read_map(g_, v, iter, outside);
    return map && rules_.folds_view(*map, dtype_size(g_.type(v).dtype));
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = g_.node(nodes[i]);
    switch (roles[i]) {
      case ir::LoopRole::Invalid: return false;
      case ir::LoopRole::Compute:
        if (n.types[0].shape != iter) return false;
        for (Value v : n.inputs)
          if (!reads(v)) return false;
        break;
      case ir::LoopRole::Reduction: {
        if (g_.type(n.inputs[0]).shape != iter || ++reductions > o_.max_reductions_per_kernel)
          return false;
        const ir::Ints a = ir::reduced_axes(g_, nodes[i]);
        if (axes && *axes != a) return false;
        axes = a;
        if (!reads(n.inputs[0])) return false;
        break;
      }
      case ir::LoopRole::FoldedView:
        if (n.types[0].shape != iter &&
            (uses_[nodes[i]] != 1 || user_[nodes[i]] < 0 ||
             !std::binary_search(nodes.begin(), nodes.end(), user_[nodes[i]])))
          return false;
        for (Value v : n.inputs)
          if (v.is_param() && donated_[v.param_index()]) return false;
        break;
      case ir::LoopRole::Alias: break;
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const int donor = donor_of_[nodes[i]];
    if (donor < 0 || (roles[i] != ir::LoopRole::Reduction && roles[i] != ir::LoopRole::Alias))
      continue;
    for (int reader : nodes)
      for (Value v : g_.node(reader).inputs)
        if (v == Value::param(donor)) return false;
  }
  return true;
}

// Would view `id`, read through the view chains in `set`, have one index map over its own shape?
bool Fuser::view_chain_folds(std::span<const int> set, int id) {
  auto outside = [&](Value v) {
    return v.is_param() || (v.def != id && !contains(set, find(v.def)));
  };
  return ir::read_map(g_, Value::node(id), g_.node(id).types[0].shape, outside).has_value();
}

// Node `id` joins every producer group it legally can (greedy, operand order), merging them;
// otherwise it starts a group of its own.
void Fuser::place(int id) {
  const ir::Node& node = g_.node(id);
  std::vector<int> ins;  // distinct groups of the operands, in operand order
  for (Value v : node.inputs)
    if (!v.is_param() && !contains(ins, find(v.def))) ins.push_back(find(v.def));

  const NodeClass c = classify(id);
  std::vector<int> set, ext;
  if (c != NodeClass::Library) {
    int size = 1;
    for (int r : ins) {
      if (!joinable(id, c, r) || !fits(size + size_[r])) continue;
      set.push_back(r);
      ext.clear();
      for (int e : ins)
        if (!contains(set, e)) ext.push_back(e);
      // A view joining only view chains forms no loop kernel yet; it joins where the chain still
      // folds into one index map, so that a chain that cannot (a reshape of a permuted value) is
      // cut before the view that breaks it: the part before runs as a copy, and what comes after
      // may still fold into the loop kernel that reads it.
      const bool ok = c == NodeClass::View && !has_loop(set)
                          ? view_chain_folds(set, id)
                          : holds(set, id, iteration_shape(id, c, set));
      if (ok && acyclic(set, ext))
        size += size_[r];
      else
        set.pop_back();
    }
  }
  Kind kind = Kind::Library;
  Shape iter;
  if (c == NodeClass::View) {
    kind = has_loop(set) ? Kind::Loop : Kind::Views;
    if (kind == Kind::Loop) iter = iteration_shape(id, c, set);

  } else if (c != NodeClass::Library) {
    // Alone, a compute node or a reduction is a valid loop kernel: it reads its operands from
    // outside, and they broadcast to its iteration shape.
    kind = Kind::Loop;
    iter = iteration_shape(id, c, set);
  }
  int root = id;
  for (int r : set) root = unite(root, r);
  kind_[root] = kind;
  iter_[root] = iter;
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
  std::vector<int> merged;
  std::merge(members_[a].begin(), members_[a].end(), members_[b].begin(), members_[b].end(),
             std::back_inserter(merged));
  members_[a].swap(merged);
  std::vector<int>().swap(members_[b]);
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
// them through another kernel and the merged kernel is valid (reductions over the same axes),
// so the value is read once and one launch goes away.
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
      if (kind_[r] != Kind::Loop || iter_[r] != s || copy_only_[r]) continue;
      if (acc < 0 || find(acc) == r) {
        acc = r;
        continue;
      }
      const int pair[2] = {find(acc), r};
      if (!fits(size_[pair[0]] + size_[r]) || !holds(pair, -1, s) || !acyclic(pair, {}))
        continue;
      acc = unite(pair[0], r);
      kind_[acc] = Kind::Loop;
      iter_[acc] = s;
      raise_levels(acc);
    }
  };
  for (int p = 0; p < static_cast<int>(g_.params().size()); ++p) visit(Value::param(p));
  for (int id = 0; id < n_; ++id)
    for (int i = 0; i < g_.num_outputs(id); ++i) visit(Value::node(id, i));
}

// The view chains of a plan fuse() made, as place() formed them: fuse leaves the views no loop
// kernel folds as library kernels of one node each, and a view joins the chains it reads through
// single-use links while the chain still folds into one index map (so a chain that cannot, a
// reshape of a permuted value, is cut before the view that breaks it).
void Fuser::rebuild_view_chains() {
  auto lone_view = [&](int r) {
    return kind_[r] == Kind::Library && size_[r] == 1 && ir::is_foldable_view(g_.node(r).op);
  };
  for (int id = 0; id < n_; ++id)
    if (lone_view(find(id))) kind_[find(id)] = Kind::Views;
  for (int id = 0; id < n_; ++id) {
    if (kind_[find(id)] != Kind::Views) continue;
    const ir::Node& node = g_.node(id);
    std::vector<int> ins;
    for (Value v : node.inputs)
      if (!v.is_param() && !contains(ins, find(v.def))) ins.push_back(find(v.def));
    for (int r : ins) {
      const int self = find(id);
      r = find(r);
      if (r == self || kind_[r] != Kind::Views || !joinable(id, NodeClass::View, r) ||
          !fits(size_[self] + size_[r]))
        continue;
      const int pair[2] = {self, r};
      if (!view_chain_folds(pair, id) || !acyclic(pair, {})) continue;
      const int root = unite(self, r);
      kind_[root] = Kind::Views;
      raise_levels(root);
    }
  }
}

// A view chain no compute node joined runs as library views, one node each (no compile for a
// copy; emit splits it); splitting a group never closes a cycle. One that ends in a concat of
// views (a gradient bucket's pack: reshapes to 1-D), or that would copy more than once (a reshape
// of an intermediate copies nothing: the buffer plan aliases it), is one loop kernel instead,
// reading through the views' composed map: one copy (attention's head split, slice then
// permute). Such a copy kernel is never merged with its siblings.
void Fuser::promote_view_chains() {
  for (int id = 0; id < n_; ++id) {
    const int r = find(id);
    const std::vector<int>& chain = members_[r];
    if (kind_[r] != Kind::Views || chain.size() < 2 || chain.back() != id) continue;
    const auto copies = std::count_if(chain.begin(), chain.end(),
                                      [&](int m) { return g_.node(m).op != ir::Op::Reshape; });
    if (g_.node(id).op != ir::Op::Concat && copies < 2) continue;
    const Shape& shape = g_.node(id).types[0].shape;
    const int set[] = {r};
    if (!holds(set, -1, shape)) continue;
    kind_[r] = Kind::Loop;
    iter_[r] = shape;
  }
}

// The groups of `plan` (Loop and Library only: epilogues come later) as the union-find state,
// with levels that rise along every edge of its kernel DAG (the plan is in a topological order).
void Fuser::load(const ir::FusionPlan& plan, std::string_view stage) {
  for (const ir::FusionGroup& grp : plan.groups) {
    if (grp.kind == ir::KernelKind::Epilogue)
      throw Error(fmt::format("pass '{}' needs the plan before 'attach_epilogues'", stage));
    int root = grp.nodes.front();
    for (int id : grp.nodes) root = unite(root, id);
    kind_[root] = grp.kind == ir::KernelKind::Loop ? Kind::Loop : Kind::Library;
    iter_[root] = grp.shape;
    const auto views = [&](int id) { return ir::is_foldable_view(g_.node(id).op); };
    copy_only_[root] = grp.kind == ir::KernelKind::Loop &&
                       std::all_of(grp.nodes.begin(), grp.nodes.end(), views);
  }
  for (const ir::FusionGroup& grp : plan.groups) {
    const int r = find(grp.nodes.front());
    level_[r] = 0;
    for (int id : grp.nodes)
      for (Value v : g_.node(id).inputs) {
        if (v.is_param() || find(v.def) == r) continue;
        level_[r] = std::max(level_[r], level_[find(v.def)] + 1);
        consumers_[find(v.def)].push_back(r);
      }
  }
}

ir::FusionPlan Fuser::emit() {
  std::vector<int> kernel(n_), number_of_root(n_, -1);
  std::vector<std::vector<int>> members;  // by kernel number: nodes in id order
  std::vector<char> loop;                 // by kernel number
  for (int id = 0; id < n_; ++id) {
    const int r = find(id);
    const bool alone = kind_[r] != Kind::Loop;
    int fresh = -1;
    int& k = alone ? fresh : number_of_root[r];
    if (k < 0) {
      k = static_cast<int>(members.size());
      members.emplace_back();
      loop.push_back(!alone);
    }
    kernel[id] = k;
    members[k].push_back(id);
  }
  const std::vector<int> order = schedule_kernels(g_, kernel, static_cast<int>(members.size()));
  std::vector<int> position(order.size());
  ir::FusionPlan plan;
  for (int k : order) {
    position[k] = static_cast<int>(plan.groups.size());
    ir::FusionGroup& grp = plan.groups.emplace_back();
    grp.kind = loop[k] ? ir::KernelKind::Loop : ir::KernelKind::Library;
    if (loop[k]) grp.shape = iter_[find(members[k].front())];
    grp.nodes = std::move(members[k]);
  }
  for (int& k : kernel) k = position[k];
  ir::fill_group_io(g_, kernel, plan.groups);
  return plan;
}

}  // namespace

ir::FusionPlan fuse(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o) {
  return o.enabled ? Fuser(g, rules, o).partition() : ir::unfused_plan(g);
}

namespace {

// A stage that only merges groups changed the plan exactly when it has fewer groups; an unchanged
// plan keeps its order.
bool take_if_merged(ir::FusionPlan edited, ir::FusionPlan& plan) {
  if (edited.groups.size() == plan.groups.size()) return false;
  plan = std::move(edited);
  return true;
}

}  // namespace

bool fuse_view_chains(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o,
                      ir::FusionPlan& plan) {
  return take_if_merged(Fuser(g, rules, o).copy_view_chains_of(plan), plan);
}

bool fuse_siblings(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o,
                   ir::FusionPlan& plan) {
  return take_if_merged(Fuser(g, rules, o).merge_siblings_of(plan), plan);
}

}  // namespace lt::passes
