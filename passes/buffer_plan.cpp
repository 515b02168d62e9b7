#include "passes/buffer_plan.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "ir/error.h"

namespace lt::passes {
namespace {

using ir::BufferPlan;
using ir::BufferSlot;
using ir::PlannedLaunch;
using ir::Storage;
using ir::Value;

int64_t aligned(int64_t bytes) {
  return (bytes + ir::kBufferAlign - 1) / ir::kBufferAlign * ir::kBufferAlign;
}

// Slots for the parameters and every value a launch writes (all in the arena for now), with the
// launch writing each and the last launch reading it.
BufferPlan collect_slots(const ir::Graph& g, std::span<const PlannedLaunch> launches) {
  BufferPlan plan;
  plan.num_params = static_cast<int>(g.params().size());
  plan.num_launches = static_cast<int>(launches.size());
  for (int p = 0; p < plan.num_params; ++p)
    plan.slots.push_back({Value::param(p), g.params()[p].type, Storage::Param});
  plan.node_slots.resize(g.nodes().size());
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    plan.node_slots[id].assign(g.num_outputs(id), -1);
  for (int li = 0; li < plan.num_launches; ++li) {
    for (Value v : launches[li].reads) {
      const int s = plan.slot_of(v);
      LT_CHECK(s >= 0, "launch {} reads {} before any launch writes it", li, ir::value_name(g, v));
      plan.slots[s].last = li;
    }
    for (Value v : launches[li].writes) {
      LT_CHECK(!v.is_param() && plan.slot_of(v) < 0, "{} is written twice", ir::value_name(g, v));
      plan.node_slots[v.def][v.index] = static_cast<int>(plan.slots.size());
      BufferSlot b{v, g.type(v), Storage::Arena};
      b.first = li;
      plan.slots.push_back(std::move(b));
    }
  }
  return plan;
}

void place_results(const ir::Graph& g, BufferPlan& plan) {
  for (Value v : g.results()) {
    const int s = plan.slot_of(v);
    LT_CHECK(s >= 0, "result {} is never written", ir::value_name(g, v));
    if (plan.slots[s].storage == Storage::Arena) plan.slots[s].storage = Storage::Result;
    plan.results.push_back(s);
  }
}

// A donated parameter's old value must be dead when its buffer is written: no later launch reads
// it, nor the writing launch unless that is an in-place Loop kernel; and it is not a result.
void place_donations(const ir::Graph& g, const ir::FusionPlan& fusion,
                     std::span<const PlannedLaunch> launches, const BufferPlanOptions& o,
                     BufferPlan& plan) {
  std::set<int> returned_params;
  for (Value v : g.results())
    if (v.is_param()) returned_params.insert(v.param_index());
  // No in-place write may come before a launch that can still fail: a failed step must leave
  // every parameter as it was (fuse() schedules checking kernels early for this). A check an
  // earlier launch already made cannot fail: the embedding's gradient, the last launch of a
  // language model's backward pass, checks the ids its forward embedding checked.
  int last_check = -1;
  std::set<ir::IdRangeCheck> made;
  auto fails = [&](int id) {
    if (!ir::checks_data_at_run_time(g.node(id))) return false;
    const auto c = ir::id_range_check(g, id);
    return !c || !made.count(*c);
  };
  for (int i = 0; i < static_cast<int>(launches.size()); ++i) {
    const ir::FusionGroup& grp = fusion.groups[launches[i].group];
    const std::span<const int> nodes =
        launches[i].node >= 0 ? std::span<const int>(&launches[i].node, 1) : grp.nodes;
    if (std::any_of(nodes.begin(), nodes.end(), fails)) last_check = i;
    for (int id : nodes)
      if (const auto c = ir::id_range_check(g, id)) made.insert(*c);
  }
  for (const ir::Donation& d : g.donations()) {
    const Value v = g.results()[d.result];
    if (v.is_param() || returned_params.count(d.param)) continue;
    BufferSlot& b = plan.slots[plan.results[d.result]];
    if (b.storage != Storage::Result || b.type.bytes() != g.params()[d.param].type.bytes())
      continue;
    if (b.first <= last_check) continue;
    const int read = plan.slots[d.param].last;
    bool in_place = false;
    if (read >= b.first) {
      const PlannedLaunch& l = launches[b.first];
      in_place = read == b.first && o.in_place_loops && l.node < 0 &&
                 ir::can_write_in_place(g, fusion.groups[l.group], v, d.param);
      if (!in_place) continue;
    }
    b.storage = Storage::Donated;
    b.donor = d.param;
    b.in_place = in_place;
  }
}

// The last launch each slot's bytes must survive: its own reads, and those of its aliases.
std::vector<int> live_ends(const BufferPlan& plan) {
  std::vector<int> end(plan.slots.size());
  for (size_t s = 0; s < plan.slots.size(); ++s) end[s] = plan.slots[s].live_until();
  for (size_t s = plan.slots.size(); s-- > 0;)  // an alias comes after the slot it aliases
    if (const int a = plan.slots[s].alias; a >= 0) end[a] = std::max(end[a], end[s]);
  return end;
}

// A library reshape of an arena value copies it into a buffer of its own for nothing: the
// reshape's output takes the value's bytes instead (its launch copies nothing), and the value
// stays live for as long as the reshape's output is read. Not for a result (it needs a buffer of
// its own) nor a parameter (its buffer may be donated and written).
// A collective reduces in place in its output's buffer, so it first copies its operand there;
// an operand that nothing reads after the collective's launch (nor through a reshape alias) gives
// the output its bytes instead, and the copy goes (a gradient bucket's pack is read only by its
// all-reduce). Where the output is a result (a gradient the caller keeps), the operand is written
// straight into the result's buffer instead, if no reshape aliases it.
void place_aliases(const ir::Graph& g, const ir::FusionPlan& fusion,
                   std::span<const PlannedLaunch> launches, const BufferPlanOptions& o,
                   BufferPlan& plan) {
  for (int li = 0; li < static_cast<int>(launches.size()); ++li) {
    const PlannedLaunch& l = launches[li];
    if (l.node < 0 || fusion.groups[l.group].kind != ir::KernelKind::Library) continue;
    const ir::Node& n = g.node(l.node);
    const bool reshape = n.op == ir::Op::Reshape && o.alias_reshapes;
    // Only all_reduce: the others' results are not their operand's size.
    const bool collective = n.op == ir::Op::AllReduce && o.alias_collectives;
    if (!reshape && !collective) continue;
    const int src = plan.slot_of(n.inputs[0]), out = plan.slot_of(l.writes[0]);
    const Storage out_storage = plan.slots[out].storage;
    if (plan.slots[src].storage != Storage::Arena ||
        (out_storage != Storage::Arena && !(collective && out_storage == Storage::Result)))
      continue;
    if (collective && (plan.slots[src].alias >= 0 || live_ends(plan)[src] != li)) continue;
    if (out_storage == Storage::Result) {
      const bool aliased = std::any_of(plan.slots.begin(), plan.slots.end(),
                                        [&](const BufferSlot& b) { return b.alias == src; });
      if (aliased) continue;
      plan.slots[src].storage = Storage::InResult;
      plan.slots[src].in_result = out;
      continue;
    }
    plan.slots[out].alias = src;
    if (reshape) plan.elided.push_back(l.node);
  }
}

// Greedy by size: largest first, each into the smallest gap that fits among the ranges of the
// values already placed that are live at a common launch, else after the last of them. Aliases
// take their slot's offset.
void place_arena(BufferPlan& plan) {
  const std::vector<int> until = live_ends(plan);
  std::vector<int> order;
  for (int s = plan.num_params; s < static_cast<int>(plan.slots.size()); ++s)
    if (plan.slots[s].storage == Storage::Arena && plan.slots[s].alias < 0) order.push_back(s);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const int64_t sa = aligned(plan.slots[a].bytes()), sb = aligned(plan.slots[b].bytes());
    return sa != sb ? sa > sb : plan.slots[a].first < plan.slots[b].first;
  });
  std::vector<int> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of placed values live with s
  for (int s : order) {
    BufferSlot& b = plan.slots[s];
    const int64_t size = aligned(b.bytes());
    if (size == 0) continue;  // offset 0, never dereferenced
    busy.clear();
    for (int t : placed) {
      const BufferSlot& c = plan.slots[t];
      if (std::max(b.first, c.first) <= std::min(until[s], until[t]))
        busy.push_back({c.offset, c.offset + aligned(c.bytes())});
    }
    std::sort(busy.begin(), busy.end());
    int64_t end = 0, best = -1, best_gap = std::numeric_limits<int64_t>::max();
    for (auto [begin, stop] : busy) {
      if (begin - end >= size && begin - end < best_gap) {
        best = end;
        best_gap = begin - end;
      }
      end = std::max(end, stop);
    }
    b.offset = best >= 0 ? best : end;
    plan.arena_bytes = std::max(plan.arena_bytes, b.offset + size);
    placed.push_back(s);
  }
  for (BufferSlot& b : plan.slots)  // in slot order: an alias's slot is placed before it
    if (b.alias >= 0) b.offset = plan.slots[b.alias].offset;
}

void tally(BufferPlan& plan) {
  const std::vector<int> until = live_ends(plan);
  std::vector<int64_t> delta(plan.num_launches + 1);
  for (int s = plan.num_params; s < static_cast<int>(plan.slots.size()); ++s) {
    const BufferSlot& b = plan.slots[s];
    plan.naive_bytes += b.bytes();
    if (b.storage == Storage::Result) plan.result_bytes += b.bytes();
    if (b.storage == Storage::Donated) plan.donated_bytes += b.bytes();
    if (b.storage != Storage::Arena || b.alias >= 0) continue;
    delta[b.first] += aligned(b.bytes());
    delta[until[s] + 1] -= aligned(b.bytes());
  }
  int64_t live = 0;
  for (int64_t d : delta) plan.live_peak_bytes = std::max(plan.live_peak_bytes, live += d);
}

}  // namespace

BufferPlan plan_buffers(const ir::Graph& g, const ir::FusionPlan& fusion,
                        const ir::KernelRules& rules, const BufferPlanOptions& options) {
  const std::vector<PlannedLaunch> launches = ir::launch_sequence(g, fusion, rules);
  BufferPlan plan = collect_slots(g, launches);
  place_results(g, plan);
  if (options.donate) place_donations(g, fusion, launches, options, plan);
  place_aliases(g, fusion, launches, options, plan);
  std::sort(plan.elided.begin(), plan.elided.end());
  place_arena(plan);
  tally(plan);
  return plan;
}

}  // namespace lt::passes
