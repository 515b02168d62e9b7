#include "passes/rewrite.h"

#include <cmath>
#include <cstdint>

#include "ir/elementwise_scalar.h"
#include "ir/error.h"
#include "ir/type_rules.h"

namespace lt::passes {
namespace {

// A cycle among rules (a rewrites to b, b back to a) would never settle; fail loudly instead.
constexpr int kMaxSweeps = 64;
// Rewrites applied to one node's successive replacements within a sweep; the next sweep goes on.
constexpr int kMaxChain = 16;
// splat_value follows at most this many views down to a full (keeps it O(1) per call).
constexpr int kMaxViewDepth = 8;

using RuleIndex = std::vector<std::vector<RewriteFn>>;  // by op number

RuleIndex index_rules(std::span<const RewriteRule> rules) {
  RuleIndex idx(ir::all_ops().size());
  for (const RewriteRule& r : rules) idx[static_cast<size_t>(r.op)].push_back(r.fn);
  return idx;
}

// Per node: 1 when live, 2 when its output 0 is used too. Rules only see nodes whose output 0 is
// used: a multi-output node kept alive by another output would otherwise fire every sweep.
std::vector<uint8_t> live_nodes(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<uint8_t> live(n, 0);
  auto use = [&](ir::Value v) {
    if (!v.is_param()) live[v.def] |= v.index == 0 ? 3 : 1;
  };
  for (ir::Value v : g.results()) use(v);
  for (int id = n - 1; id >= 0; --id)  // users come after producers
    if (live[id])
      for (ir::Value v : g.node(id).inputs) use(v);
  return live;
}

// Tries the rules of node `id` of `out`, then of each new node that replaces it. Returns the value
// that now stands for the node's output 0; sets `fired` when a rule fired.
ir::Value rewrite_node(ir::Graph& out, int id, const RuleIndex& rules, bool& fired) {
  ir::Value cur = ir::Value::node(id);
  for (int round = 0; round < kMaxChain; ++round) {
    const int nid = cur.def;
    const size_t before = out.nodes().size();
    std::optional<ir::Value> repl;
    RewriteBuilder b(out, nid);
    for (RewriteFn fn : rules[static_cast<size_t>(out.node(nid).op)]) {
      repl = fn(out, nid, b);
      if (repl) break;
      LT_CHECK(b.empty(), "a rule added nodes but did not fire on {}", ir::print_node(out, nid));
    }
    if (!repl) return cur;
    LT_CHECK(*repl != cur, "a rule replaced {} by itself", ir::print_node(out, nid));
    const TensorType want = out.node(nid).types[0];
    const std::string loc = out.node(nid).loc;
    for (ir::Node& n : b.take())
      out.add_typed(n.op, std::move(n.inputs), std::move(n.attrs), std::move(n.types), loc);
    LT_CHECK(out.type(*repl) == want, "a rule replaced {} by a value of type {}",
             ir::print_node(out, nid), type_str(out.type(*repl)));
    fired = true;
    cur = *repl;
    // An older value was already rewritten; only a node this rule added is new to the rules.
    if (cur.is_param() || cur.index != 0 || cur.def < static_cast<int>(before)) return cur;
  }
  return cur;
}

// One sweep: copies the live nodes of g into `out` in order, rewriting each as it lands. Returns
// whether any rule fired (if none did, `out` is g without its dead nodes).
bool sweep(const ir::Graph& g, const RuleIndex& rules, ir::Graph& out) {
  for (const ir::Param& p : g.params()) out.add_param(p.type, p.name);
  const int n = static_cast<int>(g.nodes().size());
  const std::vector<uint8_t> live = live_nodes(g);
  std::vector<int> new_id(n, -1);
  std::vector<ir::Value> out0(n);  // what stands for output 0 of each old node
  auto remap = [&](ir::Value v) {
    if (v.is_param()) return v;
    return v.index == 0 ? out0[v.def] : ir::Value::node(new_id[v.def], v.index);
  };
  bool fired = false;
  for (int id = 0; id < n; ++id) {
    if (!live[id]) continue;
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    ins.reserve(node.inputs.size());
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    new_id[id] = out.add_typed(node.op, std::move(ins), node.attrs, node.types, node.loc).def;
    out0[id] = (live[id] & 2) && !rules[static_cast<size_t>(node.op)].empty()
                   ? rewrite_node(out, new_id[id], rules, fired)
                   : ir::Value::node(new_id[id]);
  }
  std::vector<ir::Value> results;
  results.reserve(g.results().size());
  for (ir::Value v : g.results()) results.push_back(remap(v));
  out.set_results(std::move(results));
  for (const ir::Donation& d : g.donations()) out.add_donation(d);
  return fired;
}

}  // namespace

ir::Value RewriteBuilder::add(ir::Op op, std::vector<ir::Value> inputs, ir::Attrs attrs) {
  std::vector<TensorType> in;
  in.reserve(inputs.size());
  for (ir::Value v : inputs) in.push_back(type(v));
  TypeList types;
  try {
    types = ir::infer_types(op, in, attrs);
  } catch (const TypeError& e) {
    LT_CHECK(false, "a rule on {} built an ill-typed {}: {}", ir::print_node(g_, node_id_),
             ir::mnemonic(op), e.what());
  }
  const int id = static_cast<int>(g_.nodes().size() + pending_.size());
  pending_.push_back({op, std::move(attrs), std::move(inputs), std::move(types), ""});
  return ir::Value::node(id);
}

const TensorType& RewriteBuilder::type(ir::Value v) const {
  const int size = static_cast<int>(g_.nodes().size());
  if (v.is_param() || v.def < size) return g_.type(v);
  const size_t k = static_cast<size_t>(v.def - size);
  LT_CHECK(k < pending_.size() && v.index < static_cast<int>(pending_[k].types.size()),
           "value %{}#{} out of range", v.def, v.index);
  return pending_[k].types[v.index];
}

bool rewrite_to_fixpoint(ir::Graph& g, std::span<const RewriteRule> rules) {
  const RuleIndex idx = index_rules(rules);
  bool changed = false;
  for (int s = 0;; ++s) {
    LT_CHECK(s < kMaxSweeps, "rewrite rules did not settle in {} sweeps", kMaxSweeps);
    ir::Graph next(g.name());
    const bool fired = sweep(g, idx, next);
    // A sweep where nothing fired copied exactly the live nodes: that is dce(g), so keep it.
    if (fired || changed) g = std::move(next);
    if (!fired) break;
    changed = true;
  }
  return changed;
}

const ir::Node* producer(const ir::Graph& g, ir::Value v) {
  return v.is_param() ? nullptr : &g.node(v.def);
}

std::optional<ir::Value> view_of_same_view(const ir::Graph& g, int node_id, RewriteBuilder& b) {
  const ir::Node& n = g.node(node_id);
  const ir::Node* p = producer(g, n.inputs[0]);
  if (!p || p->op != n.op) return std::nullopt;
  const ir::Value x = p->inputs[0];
  if (g.type(x) == n.types[0]) return x;
  return b.add(n.op, {x}, n.attrs);
}

bool keeps_splats(ir::Op op) {
  const std::optional<ir::ViewOp> view = ir::as_view(op);
  if (!view) return false;
  switch (*view) {
    case ir::ViewOp::Reshape: case ir::ViewOp::Permute: case ir::ViewOp::Expand:
    case ir::ViewOp::Slice: return true;
    case ir::ViewOp::Concat: case ir::ViewOp::Pad: return false;  // other values join in
  }
  return false;
}

std::optional<double> splat_value(const ir::Graph& g, ir::Value v) {
  for (int depth = 0; depth <= kMaxViewDepth; ++depth) {
    const ir::Node* p = producer(g, v);
    if (!p) return std::nullopt;
    if (p->op == ir::Op::Full) {
      const auto& a = std::get<ir::FullAttrs>(p->attrs);
      return to_dtype(a.value, a.dtype);
    }
    if (!keeps_splats(p->op)) return std::nullopt;
    v = p->inputs[0];
  }
  return std::nullopt;
}

std::optional<double> to_dtype(double v, DType t) {
  switch (t) {
    case DType::Bool: return ir::scalar::cast<bool>(v);  // in the source precision: 1e-310 is true
    case DType::I32:
    case DType::I64:  // out of range, integer arithmetic wraps but a cast saturates: unfolded
      if (!holds_value(t, v)) return std::nullopt;
      return std::trunc(v);
    case DType::F32: return static_cast<double>(static_cast<float>(v));
    case DType::F64: return v;
    case DType::F16: case DType::BF16: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace lt::passes
