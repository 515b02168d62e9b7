// Fusion plan checks, index maps and text form. verify_fusion_plan recomputes every group's
// inputs, outputs and node roles on its own (it shares no code with passes/fuse), so a fuser bug
// is caught here, naming the kernel, rather than as wrong numbers from the emitter.
#include "ir/fusion_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "ir/error.h"

namespace lt::ir {

bool is_foldable_view(Op op) { return as_view(op).has_value(); }

bool is_loop_reduction(const Graph& g, int id) {
  const Node& n = g.node(id);
  const auto r = as_reduce(n.op);
  if (!r || *r == ReduceOp::ArgMax || *r == ReduceOp::LogSumExp) return false;
  const TensorType& in = g.type(n.inputs[0]);
  if (!is_compute_type(in.dtype) || in.dtype == DType::Bool) return false;
  // Nothing to accumulate when an output has at most one element to reduce (and a kernel that
  // wrote such an output over its donated input would overwrite what it still reads).
  return in.numel() > 0 && n.types[0].numel() > 0 && in.numel() / n.types[0].numel() >= 2;
}

std::vector<int64_t> reduced_axes(const Graph& g, int id) {
  const auto& a = std::get<ReduceAttrs>(g.node(id).attrs);
  if (!a.axes.empty()) return a.axes;
  std::vector<int64_t> all(g.type(g.node(id).inputs[0]).shape.size());
  for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
  return all;
}

std::vector<LoopRole> loop_roles(const Graph& g, std::span<const int> nodes) {
  std::map<int, LoopRole> role;  // by node id, for the kernel's own nodes
  std::vector<LoopRole> out;
  for (int id : nodes) {
    const Node& n = g.node(id);
    auto inner = [&](Value v) -> std::optional<LoopRole> {
      if (v.is_param()) return std::nullopt;
      const auto it = role.find(v.def);
      return it == role.end() ? std::nullopt : std::optional(it->second);
    };
    LoopRole r = LoopRole::Invalid;
    if (as_elementwise(n.op)) {
      r = LoopRole::Compute;
    } else if (as_reduce(n.op)) {
      if (is_loop_reduction(g, id)) r = LoopRole::Reduction;
    } else if (is_foldable_view(n.op)) {
      const bool folds = std::all_of(n.inputs.begin(), n.inputs.end(), [&](Value v) {
        const auto k = inner(v);
        return !k || *k == LoopRole::FoldedView;
      });
      const auto k = inner(n.inputs[0]);
      if (folds)
        r = LoopRole::FoldedView;
      else if (n.op == Op::Reshape && k != LoopRole::Invalid)
        r = LoopRole::Alias;
      else if (n.op == Op::Expand && k == LoopRole::Compute && g.type(n.inputs[0]) == n.types[0])
        r = LoopRole::Compute;  // a no-op expand of a computed value
    }
    role[id] = r;
    out.push_back(r);
  }
  return out;
}

namespace {

// ---- Index maps. Each transform takes the operand's map and gives the view's. ----

bool covers_all(const ReadPiece& p, const Shape& s) {
  for (size_t d = 0; d < s.size(); ++d)
    if (p.lo[d] > 0 || p.hi[d] < s[d]) return false;
  return true;
}

/// Drops pieces that hold nowhere and pieces after one that holds everywhere.
ReadMap tidy(ReadMap m) {
  std::vector<ReadPiece> kept;
  for (ReadPiece& p : m.pieces) {
    bool empty = false;
    for (size_t d = 0; d < m.shape.size(); ++d) empty = empty || p.lo[d] >= p.hi[d];
    if (empty) continue;
    const bool all = covers_all(p, m.shape);
    kept.push_back(std::move(p));
    if (all) break;
  }
  m.pieces = std::move(kept);
  return m;
}

ReadMap identity_map(Value v, const Shape& s) {
  ReadPiece p;
  p.source = v;
  p.stride = contiguous_strides(s);
  p.lo.assign(s.size(), 0);
  p.hi = s;
  return tidy({s, {p}});
}

ReadMap permute_map(ReadMap m, const Ints& perm) {
  auto by_perm = [&](const std::vector<int64_t>& xs) {
    std::vector<int64_t> out(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) out[i] = xs[perm[i]];
    return out;
  };
  m.shape = by_perm(m.shape);
  for (ReadPiece& p : m.pieces) {
    p.stride = by_perm(p.stride);
    p.lo = by_perm(p.lo);
    p.hi = by_perm(p.hi);
  }
  return m;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

ReadMap slice_map(ReadMap m, const SliceAttrs& a, const Shape& out) {
  for (ReadPiece& p : m.pieces) {
    for (size_t d = 0; d < out.size(); ++d) {
      // out index i reads in index start + step * i, which must lie in [lo, hi).
      const int64_t start = a.start[d], step = a.step[d];
      p.offset += start * p.stride[d];
      p.stride[d] *= step;
      p.lo[d] = std::min(out[d], ceil_div(std::max<int64_t>(p.lo[d] - start, 0), step));
      p.hi[d] = std::min(out[d], ceil_div(std::max<int64_t>(p.hi[d] - start, 0), step));
    }
  }
  m.shape = out;
  return tidy(std::move(m));
}

/// Broadcast (right-aligned) to `to`; nullopt when the shapes do not broadcast.
std::optional<ReadMap> expand_map(ReadMap m, const Shape& to) {
  if (m.shape.size() > to.size()) return std::nullopt;
  const size_t lead = to.size() - m.shape.size();
  for (size_t d = 0; d < m.shape.size(); ++d)
    if (m.shape[d] != to[lead + d] && m.shape[d] != 1) return std::nullopt;
  for (ReadPiece& p : m.pieces) {
    ReadPiece q = p;
    q.stride.assign(to.size(), 0);
    q.lo.assign(to.size(), 0);
    q.hi = to;
    for (size_t d = 0; d < m.shape.size(); ++d) {
      if (m.shape[d] == to[lead + d]) {
        q.stride[lead + d] = p.stride[d];
        q.lo[lead + d] = p.lo[d];
        q.hi[lead + d] = p.hi[d];
      } else if (p.lo[d] >= p.hi[d]) {
        q.hi[lead + d] = 0;  // a repeated dim the piece does not cover
      }
    }
    p = std::move(q);
  }
  m.shape = to;
  return tidy(std::move(m));
}

ReadMap pad_map(ReadMap m, const PadAttrs& a, const Shape& out) {
  for (ReadPiece& p : m.pieces) {
    for (size_t d = 0; d < out.size(); ++d) {
      p.offset -= a.lo[d] * p.stride[d];
      p.lo[d] += a.lo[d];
      p.hi[d] += a.lo[d];
    }
  }
  ReadPiece fill;
  fill.constant = true;
  fill.fill = a.value;
  fill.stride.assign(out.size(), 0);
  fill.lo.assign(out.size(), 0);
  fill.hi = out;
  m.pieces.push_back(std::move(fill));
  m.shape = out;
  return tidy(std::move(m));
}

ReadMap concat_map(std::vector<ReadMap> parts, int64_t axis, const Shape& out) {
  ReadMap m{out, {}};
  int64_t at = 0;
  for (ReadMap& part : parts) {
    for (ReadPiece& p : part.pieces) {
      p.offset -= at * p.stride[axis];
      p.lo[axis] += at;
      p.hi[axis] += at;
      m.pieces.push_back(std::move(p));
    }
    at += part.shape[axis];
  }
  return tidy(std::move(m));
}

/// Reshape: dims of size 1 go (a piece that does not cover index 0 there holds nowhere) and
/// come (stride 0); runs of dims with equal products map onto each other, which needs every piece
/// unbounded on a run that changes and contiguous across it (stride[i] = stride[i+1] * dim[i+1]).
std::optional<ReadMap> reshape_map(const ReadMap& m, const Shape& out) {
  if (numel(out) == 0) {  // nothing is ever read
    ReadPiece p;
    p.constant = true;
    p.stride.assign(out.size(), 0);
    p.lo.assign(out.size(), 0);
    p.hi = out;
    return ReadMap{out, {p}};
  }
  std::vector<size_t> in_dims, out_dims;  // dims of size > 1
  for (size_t d = 0; d < m.shape.size(); ++d)
    if (m.shape[d] != 1) in_dims.push_back(d);
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) out_dims.push_back(d);
  ReadMap r{out, {}};
  for (const ReadPiece& p : m.pieces) {
    ReadPiece q = p;
    q.stride.assign(out.size(), 0);
    q.lo.assign(out.size(), 0);
    q.hi = out;
    bool holds = true;
    for (size_t d = 0; d < m.shape.size(); ++d)
      if (m.shape[d] == 1 && p.lo[d] >= p.hi[d]) holds = false;
    if (!holds) continue;
    size_t i = 0, o = 0;
    while (i < in_dims.size()) {
      // The run in_dims[i, i2) <-> out_dims[o, o2) with equal products.
      size_t i2 = i + 1, o2 = o + 1;
      int64_t pi = m.shape[in_dims[i]], po = out[out_dims[o]];
      while (pi != po) {
        if (pi < po)
          pi *= m.shape[in_dims[i2++]];
        else
          po *= out[out_dims[o2++]];
      }
      if (i2 == i + 1 && o2 == o + 1) {
        q.stride[out_dims[o]] = p.stride[in_dims[i]];
        q.lo[out_dims[o]] = p.lo[in_dims[i]];
        q.hi[out_dims[o]] = p.hi[in_dims[i]];
      } else {
        for (size_t k = i; k < i2; ++k) {
          const size_t d = in_dims[k];
          if (p.lo[d] > 0 || p.hi[d] < m.shape[d]) return std::nullopt;
          if (k + 1 < i2 && p.stride[d] != p.stride[in_dims[k + 1]] * m.shape[in_dims[k + 1]])
            return std::nullopt;
        }
        int64_t s = p.stride[in_dims[i2 - 1]];
        for (size_t k = o2; k-- > o;) {
          q.stride[out_dims[k]] = s;
          s *= out[out_dims[k]];
        }
      }
      i = i2;
      o = o2;
    }
    r.pieces.push_back(std::move(q));
  }
  return tidy(std::move(r));
}

std::optional<ReadMap> map_of(const Graph& g, Value v, const std::function<bool(Value)>& outside,
                              int depth) {
  if (outside(v)) return identity_map(v, g.type(v).shape);
  const Node& n = g.node(v.def);
  if (!is_foldable_view(n.op) || depth > 256) return std::nullopt;
  std::vector<ReadMap> in;
  for (Value x : n.inputs) {
    auto m = map_of(g, x, outside, depth + 1);
    if (!m) return std::nullopt;
    in.push_back(std::move(*m));
  }
  const Shape& out = n.types[0].shape;
  switch (*as_view(n.op)) {
    case ViewOp::Reshape: return reshape_map(in[0], out);
    case ViewOp::Permute:
      return permute_map(std::move(in[0]), std::get<PermuteAttrs>(n.attrs).perm);
    case ViewOp::Expand: return expand_map(std::move(in[0]), out);
    case ViewOp::Slice: return slice_map(std::move(in[0]), std::get<SliceAttrs>(n.attrs), out);
    case ViewOp::Concat: return concat_map(std::move(in), std::get<ConcatAttrs>(n.attrs).axis, out);
    case ViewOp::Pad: return pad_map(std::move(in[0]), std::get<PadAttrs>(n.attrs), out);
  }
  LT_UNREACHABLE();
}

}  // namespace

std::optional<ReadMap> read_map(const Graph& g, Value v, const Shape& iter,
                                const std::function<bool(Value)>& outside) {
  auto m = map_of(g, v, outside, 0);
  if (!m) return std::nullopt;
  return expand_map(std::move(*m), iter);
}

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw InternalError("invalid fusion plan: " + what);
}

std::string value_list(const Graph& g, std::span<const Value> vs) {
  if (vs.empty()) return "-";
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + value_name(g, vs[i]);
  return s;
}

// Which kernel holds each node; checks "every node in exactly one group" and group sizes.
std::vector<int> kernel_of_nodes(const Graph& g, const FusionPlan& plan) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> kernel(n, -1);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const FusionGroup& grp = plan.groups[k];
    if (grp.nodes.empty()) fail(fmt::format("kernel {} has no nodes", k));
    if (grp.kind == KernelKind::Library && grp.nodes.size() != 1)
      fail(fmt::format("library kernel {} holds {} nodes; a library kernel runs exactly one", k,
                       grp.nodes.size()));
    if (grp.kind == KernelKind::Epilogue && grp.nodes.size() < 2)
      fail(fmt::format("epilogue kernel {} holds no loop after its library node", k));
    for (int id : grp.nodes) {
      if (id < 0 || id >= n)
        fail(fmt::format("kernel {} names node %{}, which does not exist", k, id));
      if (kernel[id] >= 0) fail(fmt::format("node %{} is in kernels {} and {}", id, kernel[id], k));
      kernel[id] = static_cast<int>(k);
    }
  }
  for (int id = 0; id < n; ++id)
    if (kernel[id] < 0) fail(fmt::format("node {} is in no kernel", print_node(g, id)));
  return kernel;
}

// Each operand is a parameter, an earlier node of the same kernel, or a node of an earlier kernel.
void check_order(const Graph& g, const FusionPlan& plan, std::span<const int> kernel) {
  std::vector<int> pos(g.nodes().size(), 0);
  for (const FusionGroup& grp : plan.groups)
    for (size_t i = 0; i < grp.nodes.size(); ++i) pos[grp.nodes[i]] = static_cast<int>(i);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    for (int id : plan.groups[k].nodes) {
      for (Value v : g.node(id).inputs) {
        if (v.is_param()) continue;
        const int from = kernel[v.def];
        if (from > static_cast<int>(k))
          fail(fmt::format("kernel {} reads {} from kernel {}, which runs later", k,
                           value_name(g, v), from));
        if (from == static_cast<int>(k) && pos[v.def] > pos[id])
          fail(fmt::format("kernel {} lists %{} before its operand %{}", k, id, v.def));
      }
    }
  }
}

// The loop kernel contract (docs/IR.md): see LoopRole. Compute nodes have the iteration shape;
// reductions reduce it, all over the same axes, and only aliases read their results; views
// either fold (every operand from outside or folded) or alias a computed value (reshape); what
// a node reads from outside or through folded views must have an index map into the iteration
// space; a folded view is written only at the iteration shape.
class LoopChecker {
 public:
  LoopChecker(const Graph& g, const FusionGroup& grp, size_t k, std::span<const int> kernel)
      : g_(g), grp_(grp), k_(static_cast<int>(k)), kernel_(kernel),
        head_(fmt::format("loop kernel {} ({})", k, shape_str(grp.shape))) {}

  void run() {
    const std::vector<LoopRole> roles = loop_roles(g_, grp_.nodes);
    for (size_t i = 0; i < grp_.nodes.size(); ++i) role_[grp_.nodes[i]] = roles[i];
    for (size_t i = 0; i < grp_.nodes.size(); ++i) check_node(grp_.nodes[i], roles[i]);
    for (Value v : grp_.outputs) check_output(v);
  }

 private:
  bool outside(Value v) const { return v.is_param() || kernel_[v.def] != k_; }
  std::optional<LoopRole> role_of(Value v) const {
    if (outside(v)) return std::nullopt;
    const auto it = role_.find(v.def);
    return it == role_.end() ? std::nullopt : std::optional(it->second);
  }

  void check_node(int id, LoopRole role) {
    const Node& n = g_.node(id);
    switch (role) {
      case LoopRole::Invalid:
        fail(fmt::format("{} holds {}, which is neither elementwise, a view it can fold or alias, "
                         "nor a reduction it can end in",
                         head_, print_node(g_, id)));
      case LoopRole::Compute:
        if (n.types.size() != 1 || n.types[0].shape != grp_.shape)
          fail(fmt::format("{} holds {}, whose shape is not the iteration shape", head_,
                           print_node(g_, id)));
        for (Value v : n.inputs) check_read(id, v);
        return;
      case LoopRole::Reduction: {
        if (g_.type(n.inputs[0]).shape != grp_.shape)
          fail(fmt::format("{} holds {}, which does not reduce the iteration shape", head_,
                           print_node(g_, id)));
        const std::vector<int64_t> axes = reduced_axes(g_, id);
        if (axes_ && *axes_ != axes)
          fail(fmt::format("{} holds {}, which reduces other axes than the kernel's other "
                           "reductions",
                           head_, print_node(g_, id)));
        axes_ = axes;
        check_read(id, n.inputs[0]);
        return;
      }
      case LoopRole::FoldedView:
      case LoopRole::Alias: return;  // checked where read or written
    }
  }

  // A compute node or reduction reads v: a computed value of the iteration shape, or through an
  // index map.
  void check_read(int id, Value v) {
    const auto role = role_of(v);
    if (role == LoopRole::Compute) return;  // of the iteration shape: checked at its node
    if (role == LoopRole::Alias || role == LoopRole::Reduction)
      fail(fmt::format("{} holds %{}, which reads {}, a reduction result or alias the kernel "
                       "does not have per element",
                       head_, id, value_name(g_, v)));
    if (!read_map(g_, v, grp_.shape, [&](Value x) { return outside(x); }))
      fail(fmt::format("{} holds %{}, which reads {} of shape {} through views that do not fold "
                       "into the iteration space",
                       head_, id, value_name(g_, v), shape_str(g_.type(v).shape)));
  }

  void check_output(Value v) {
    if (role_of(v) != LoopRole::FoldedView) return;
    if (g_.type(v).shape != grp_.shape ||
        !read_map(g_, v, grp_.shape, [&](Value x) { return outside(x); }))
      fail(fmt::format("{} writes {}, a view it folds into index maps, whose shape is not the "
                       "iteration shape",
                       head_, value_name(g_, v)));
  }

  const Graph& g_;
  const FusionGroup& grp_;
  int k_;
  std::span<const int> kernel_;
  std::string head_;
  std::map<int, LoopRole> role_;
  std::optional<std::vector<int64_t>> axes_;
};

// The library node takes an epilogue and makes the group's shape; the loop after it follows the
// loop kernel contract with the library output as an input from outside, which it reads without
// reductions and only element by element (a block of it is all the loop may see at a time).
void check_epilogue(const Graph& g, const FusionGroup& grp, size_t k, std::span<const int> kernel) {
  const int lib = grp.nodes.front();
  const std::string head = fmt::format("epilogue kernel {} ({})", k, shape_str(grp.shape));
  if (!takes_epilogue(g, lib))
    fail(fmt::format("{} starts with {}, which takes no epilogue", head, print_node(g, lib)));
  if (g.node(lib).types[0].shape != grp.shape)
    fail(fmt::format("{}: its library node's output is {}, not the kernel's shape", head,
                     shape_str(g.node(lib).types[0].shape)));
  const FusionGroup loop = epilogue_loop(g, grp);
  if (std::find(loop.inputs.begin(), loop.inputs.end(), Value::node(lib)) == loop.inputs.end())
    fail(fmt::format("{}: its loop does not read the library output", head));
  std::vector<int> loop_kernel(kernel.begin(), kernel.end());
  loop_kernel[lib] = -1;  // outside the loop
  LoopChecker(g, loop, k, loop_kernel).run();
  const std::vector<LoopRole> roles = loop_roles(g, loop.nodes);
  for (size_t i = 0; i < loop.nodes.size(); ++i) {
    const Node& n = g.node(loop.nodes[i]);
    if (roles[i] == LoopRole::Reduction)
      fail(fmt::format("{} holds {}, a reduction", head, print_node(g, loop.nodes[i])));
    const bool reads_lib = std::any_of(n.inputs.begin(), n.inputs.end(),
                                       [&](Value v) { return !v.is_param() && v.def == lib; });
    if (reads_lib && roles[i] != LoopRole::Compute)
      fail(fmt::format("{} holds {}, which reads the library output other than element by element",
                       head, print_node(g, loop.nodes[i])));
  }
}

}  // namespace

bool takes_epilogue(const Graph& g, int id) {
  const Node& n = g.node(id);
  const auto op = as_library(n.op);
  return op && (*op == LibraryOp::MatMul || *op == LibraryOp::Conv2d) && n.types.size() == 1 &&
         (n.types[0].dtype == DType::F32 || n.types[0].dtype == DType::F64);
}

FusionGroup epilogue_loop(const Graph& g, const FusionGroup& grp) {
  FusionGroup loop;
  loop.kind = KernelKind::Loop;
  loop.shape = grp.shape;
  loop.nodes.assign(grp.nodes.begin() + 1, grp.nodes.end());
  const std::set<int> inside(loop.nodes.begin(), loop.nodes.end());
  std::set<Value> seen;
  for (int id : loop.nodes)
    for (Value v : g.node(id).inputs)
      if ((v.is_param() || !inside.count(v.def)) && seen.insert(v).second) loop.inputs.push_back(v);
  for (Value v : grp.outputs)
    if (v.is_param() || v.def != grp.nodes.front()) loop.outputs.push_back(v);
  return loop;
}

bool epilogue_materializes(const Graph& g, const FusionGroup& grp) {
  const int lib = grp.nodes.front();
  if (std::find(grp.outputs.begin(), grp.outputs.end(), Value::node(lib)) != grp.outputs.end())
    return true;
  return as_library(g.node(lib).op) != LibraryOp::Conv2d;
}

void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups) {
  const ValueIndex index(g);
  std::vector<bool> escapes(index.size(), false);  // read by another kernel or returned
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) escapes[index(v)] = true;
  for (Value v : g.results()) escapes[index(v)] = true;

  std::vector<int> seen(index.size(), -1);  // last kernel that listed the value as an input
  for (size_t k = 0; k < groups.size(); ++k) {
    FusionGroup& grp = groups[k];
    grp.inputs.clear();
    grp.outputs.clear();
    for (int id : grp.nodes) {
      for (Value v : g.node(id).inputs) {
        if (!v.is_param() && kernel[v.def] == static_cast<int>(k)) continue;
        if (std::exchange(seen[index(v)], static_cast<int>(k)) != static_cast<int>(k))
          grp.inputs.push_back(v);
      }
    }
    for (int id : grp.nodes)
      for (int i = 0; i < g.num_outputs(id); ++i)
        if (escapes[index(Value::node(id, i))]) grp.outputs.push_back(Value::node(id, i));
  }
}

namespace {

void check_io(const Graph& g, const FusionPlan& plan, std::span<const int> kernel) {
  std::vector<FusionGroup> want = plan.groups;
  fill_group_io(g, kernel, want);
  for (size_t k = 0; k < want.size(); ++k) {
    const FusionGroup& have = plan.groups[k];
    if (have.inputs != want[k].inputs)
      fail(fmt::format("kernel {} inputs are ({}) but should be ({})", k,
                       value_list(g, have.inputs), value_list(g, want[k].inputs)));
    if (have.outputs != want[k].outputs)
      fail(fmt::format("kernel {} outputs are ({}) but should be ({})", k,
                       value_list(g, have.outputs), value_list(g, want[k].outputs)));
  }
}

}  // namespace

void verify_fusion_plan(const Graph& g, const FusionPlan& plan) {
  const std::vector<int> kernel = kernel_of_nodes(g, plan);
  check_order(g, plan, kernel);
  check_io(g, plan, kernel);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    if (plan.groups[k].kind == KernelKind::Loop) LoopChecker(g, plan.groups[k], k, kernel).run();
    if (plan.groups[k].kind == KernelKind::Epilogue) check_epilogue(g, plan.groups[k], k, kernel);
  }
}

std::string print_fusion_plan(const Graph& g, const FusionPlan& plan) {
  const int n = static_cast<int>(g.nodes().size());
  std::string s;
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const FusionGroup& grp = plan.groups[k];
    // Robust to broken plans (it is used to report them): unknown node ids print as '?'.
    const int last = grp.nodes.empty() ? -1 : grp.nodes.back();
    const bool known = last >= 0 && last < n;
    if (grp.kind == KernelKind::Loop) {
      // The dtype shown is the first output's (else the last node's): a kernel that also writes
      // a bool mask still reads as the f32 kernel it mostly is.
      std::string_view dtype = known ? dtype_name(g.node(last).types[0].dtype) : "?";
      if (!grp.outputs.empty() && grp.outputs[0].def < n)
        dtype = dtype_name(g.type(grp.outputs[0]).dtype);
      s += fmt::format("kernel {} loop {}{}", k, dtype, shape_str(grp.shape));
      // A reducing kernel names the axes it reduces (the first reduction's).
      for (int id : grp.nodes) {
        if (id < 0 || id >= n || !as_reduce(g.node(id).op)) continue;
        s += fmt::format(" reduce{}", shape_str(reduced_axes(g, id)));
        break;
      }
      s += ":";
    } else if (grp.kind == KernelKind::Epilogue) {
      const int first = grp.nodes.front();
      const bool ok = first >= 0 && first < n;
      s += fmt::format("kernel {} {}+loop {}{}:", k, ok ? mnemonic(g.node(first).op) : "?",
                       ok ? dtype_name(g.node(first).types[0].dtype) : "?", shape_str(grp.shape));
    } else {
      s += fmt::format("kernel {} library {}:", k, known ? mnemonic(g.node(last).op) : "?");
    }
    for (int id : grp.nodes) s += fmt::format(" %{}", id);
    s += fmt::format(" (in: {}; out: {})\n", value_list(g, grp.inputs), value_list(g, grp.outputs));
  }
  return s;
}

FusionPlan unfused_plan(const Graph& g) {
  FusionPlan plan;
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> kernel(n);
  for (int id = 0; id < n; ++id) {
    kernel[id] = id;
    FusionGroup& grp = plan.groups.emplace_back();
    grp.kind = KernelKind::Library;
    grp.nodes = {id};
  }
  fill_group_io(g, kernel, plan.groups);
  return plan;
}

}  // namespace lt::ir
