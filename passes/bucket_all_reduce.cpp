#include "passes/bucket_all_reduce.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "passes/graph_copy.h"

namespace lt::passes {
namespace {

struct Bucket {
  std::vector<int> members;  // all_reduce node ids, in the order their operands are computed
  int64_t bytes = 0;
  int after = -1;  // the node that computes the last operand; -1: all operands are parameters
};

// Where an all_reduce's operand is computed: its node id, -1 for a parameter.
int operand_position(const ir::Graph& g, int id) {
  const ir::Value x = g.node(id).inputs[0];
  return x.is_param() ? -1 : x.def;
}

// The first node that reads output 0 of each node; the node count for none.
std::vector<int> first_uses(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> first(n, n);
  for (int id = n - 1; id >= 0; --id)
    for (ir::Value v : g.node(id).inputs)
      if (!v.is_param() && v.index == 0) first[v.def] = id;
  return first;
}

std::vector<Bucket> make_buckets(const ir::Graph& g, const BucketOptions& o) {
  // One queue per (dtype, reduction): only those can share a buffer and a collective.
  std::map<std::pair<DType, ir::ReduceKind>, std::vector<int>> queues;
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op != ir::Op::AllReduce) continue;
    queues[{n.types[0].dtype, std::get<ir::AllReduceAttrs>(n.attrs).reduce}].push_back(id);
  }
  const std::vector<int> first_use = first_uses(g);
  std::vector<Bucket> buckets;
  for (auto& [key, ids] : queues) {
    std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
      return operand_position(g, a) < operand_position(g, b);
    });
    Bucket cur;
    int cur_first_use = 0;  // the earliest read of a member's result
    bool first = true;
    for (int id : ids) {
      const auto bytes = static_cast<int64_t>(g.node(id).types[0].bytes());
      const int64_t cap = first ? o.first_bytes : o.bytes;
      const int pos = operand_position(g, id);
      // The bucket runs after its last operand is computed: every member's result must be read
      // only after that, and no member may reduce another member's result.
      const bool in_order =
          pos < cur_first_use &&
          std::find(cur.members.begin(), cur.members.end(), pos) == cur.members.end();
      if (!cur.members.empty() && (cur.bytes + bytes > cap || !in_order)) {
        buckets.push_back(std::move(cur));
        cur = Bucket{};
        first = false;
      }
      if (cur.members.empty()) cur_first_use = first_use[id];
      cur.members.push_back(id);
      cur.bytes += bytes;
      cur.after = std::max(cur.after, pos);
      cur_first_use = std::min(cur_first_use, first_use[id]);
    }
    if (!cur.members.empty()) buckets.push_back(std::move(cur));
  }
  return buckets;
}

}  // namespace

bool bucket_all_reduce(ir::Graph& g, const BucketOptions& o) {
  if (o.bytes <= 0) return false;
  std::vector<Bucket> buckets = make_buckets(g, o);
  if (buckets.empty()) return false;
  const int n = static_cast<int>(g.nodes().size());
  // Buckets emitted after node `after` (index after + 1; 0 holds those over parameters only),
  // in the order their first operands are computed.
  std::vector<std::vector<const Bucket*>> emit_after(n + 1);
  std::stable_sort(buckets.begin(), buckets.end(), [&](const Bucket& a, const Bucket& b) {
    return operand_position(g, a.members[0]) < operand_position(g, b.members[0]);
  });
  std::vector<bool> bucketed(n, false);
  for (const Bucket& b : buckets) {
    emit_after[b.after + 1].push_back(&b);
    for (int id : b.members) bucketed[id] = true;
  }
  // Lone all_reduces before packed buckets at the same place: a second run sees a packed
  // bucket's all_reduce after its pack, a node of the graph by then, and so after the lone ones;
  // emitting them in that order now makes the pass idempotent.
  for (auto& at : emit_after)
    std::stable_partition(at.begin(), at.end(),
                          [](const Bucket* b) { return b->members.size() == 1; });

  ir::Graph out = empty_copy(g);
  std::vector<ir::Value> value_of(n);  // node id -> its output 0 in `out`
  std::vector<int> new_id(n, -1);
  std::vector<int> origin;  // per node of `out`: the node of `g` it copies, -1 for a new one
  // Members of buckets of several values: their bucket's result in `out`, and their offset in it.
  std::vector<std::optional<std::pair<ir::Value, int64_t>>> unpack(n);
  auto remap = [&](ir::Value v) {
    if (v.is_param()) return v;
    return v.index == 0 ? value_of[v.def] : ir::Value::node(new_id[v.def], v.index);
  };
  auto add = [&](ir::Op op, std::vector<ir::Value> ins, ir::Attrs attrs, const std::string& loc,
                 int from) {
    const ir::Value v = out.add(op, std::move(ins), std::move(attrs), loc);
    origin.push_back(from);
    return v;
  };
  // A member's piece of its bucket's result, where the member was: its readers keep their place
  // in the schedule, after the rest of the backward pass, which then overlaps the collective. A
  // member that came before the bucket's last operand gets it right after the bucket.
  auto emit_piece = [&](int id) {
    const auto [reduced, offset] = *unpack[id];
    const ir::Node& node = g.node(id);
    const TensorType& t = node.types[0];
    ir::Value v = add(ir::Op::Slice, {reduced},
                      ir::SliceAttrs{{offset}, {offset + t.numel()}, {1}}, node.loc, -1);
    if (t.shape.size() != 1) v = add(ir::Op::Reshape, {v}, ir::ReshapeAttrs{t.shape}, node.loc, -1);
    value_of[id] = v;
  };
  auto emit = [&](const Bucket& b) {
    const ir::Node& head = g.node(b.members[0]);
    if (b.members.size() == 1) {
      const ir::Value v = add(ir::Op::AllReduce, {remap(head.inputs[0])}, head.attrs, head.loc,
                              b.members[0]);
      value_of[b.members[0]] = v;
      new_id[b.members[0]] = v.def;
      return;
    }
    std::vector<ir::Value> flat;
    for (int id : b.members) {
      const ir::Value x = remap(g.node(id).inputs[0]);
      const TensorType& t = out.type(x);
      flat.push_back(t.shape.size() == 1 ? x
                                         : add(ir::Op::Reshape, {x},
                                               ir::ReshapeAttrs{{t.numel()}}, head.loc, -1));
    }
    const ir::Value packed = add(ir::Op::Concat, flat, ir::ConcatAttrs{0}, head.loc, -1);
    const ir::Value reduced = add(ir::Op::AllReduce, {packed}, head.attrs, head.loc, -1);
    int64_t offset = 0;
    for (int id : b.members) {
      unpack[id] = std::pair{reduced, offset};
      offset += g.node(id).types[0].numel();
    }
    for (int id : b.members)
      if (id <= b.after) emit_piece(id);
  };
  for (const Bucket* b : emit_after[0]) emit(*b);
  for (int id = 0; id < n; ++id) {
    if (unpack[id]) emit_piece(id);
    if (!bucketed[id]) {
      const ir::Node& node = g.node(id);
      std::vector<ir::Value> ins;
      for (ir::Value v : node.inputs) ins.push_back(remap(v));
      const ir::Value v = out.add_typed(node.op, std::move(ins), node.attrs, node.types, node.loc);
      origin.push_back(id);
      value_of[id] = v;
      new_id[id] = v.def;
    }
    for (const Bucket* b : emit_after[id + 1]) emit(*b);
  }
  std::vector<int> identity(n);
  std::iota(identity.begin(), identity.end(), 0);
  if (origin == identity) return false;  // every bucket a lone all_reduce already in its place

  std::vector<ir::Value> results;
  for (ir::Value v : g.results()) results.push_back(remap(v));
  replace_graph(g, std::move(out), std::move(results));
  return true;
}

}  // namespace lt::passes
