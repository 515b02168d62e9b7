// Buffer plan: the launch model shared by the planner and codegen, the in-place rule, the checker
// and the text form. verify_buffer_plan recomputes liveness on its own, so a planner bug is caught
// here, naming the value, rather than as wrong numbers from a kernel.
#include "ir/buffer_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "ir/error.h"
#include "ir/kernel_rules.h"

namespace lt::ir {
namespace {

[[noreturn]] void fail(const Graph& g, Value v, const std::string& what) {
  throw InternalError(fmt::format("invalid buffer plan: {}: {}", value_name(g, v), what));
}

const char* storage_name(Storage s) {
  switch (s) {
    case Storage::Param:
      return "param";
    case Storage::Arena:
      return "arena";
    case Storage::Result:
      return "result";
    case Storage::Donated:
      return "donated";
    case Storage::InResult:
      return "in result";
  }
  return "?";
}

int64_t aligned(int64_t bytes) { return (bytes + kBufferAlign - 1) / kBufferAlign * kBufferAlign; }

// Every launch's reads and writes have slots, a write's slot names that launch as its first, and
// first/last match the launches; returns the last launch reading each slot (-1: none).
std::vector<int> check_slots(const Graph& g, std::span<const PlannedLaunch> launches,
                             const BufferPlan& plan) {
  std::vector<int> last(plan.slots.size(), -1);
  for (int li = 0; li < static_cast<int>(launches.size()); ++li) {
    for (Value v : launches[li].reads) {
      const int s = plan.slot_of(v);
      if (s < 0 || s >= static_cast<int>(plan.slots.size())) fail(g, v, "read without a slot");
      if (plan.slots[s].first >= li)
        fail(g, v, fmt::format("read by launch {} before written", li));
      last[s] = li;
    }
    for (Value v : launches[li].writes) {
      const int s = plan.slot_of(v);
      if (s < 0 || s >= static_cast<int>(plan.slots.size())) fail(g, v, "written without a slot");
      if (plan.slots[s].value != v || plan.slots[s].first != li)
        fail(g, v, fmt::format("slot {} does not record launch {} writing it", s, li));
    }
  }
  for (size_t s = 0; s < plan.slots.size(); ++s)
    if (last[s] != plan.slots[s].last)
      fail(g, plan.slots[s].value,
           fmt::format("last read at launch {}, plan says {}", last[s], plan.slots[s].last));
  return last;
}

// The first slot of an alias chain.
int alias_root(const BufferPlan& plan, int s) {
  while (plan.slots[s].alias >= 0) s = plan.slots[s].alias;
  return s;
}

// Whether slot `s`'s alias chain passes through slot `through` (or is it).
bool aliases(const BufferPlan& plan, int s, int through) {
  for (; s >= 0; s = plan.slots[s].alias)
    if (s == through) return true;
  return false;
}

// An alias is the output of a library reshape or collective whose operand is its aliased slot,
// both in the arena at one offset. A collective writes those bytes, so its operand is not itself
// an alias and nothing reads it, or another alias of it, after the collective's launch.
void check_alias(const Graph& g, const FusionPlan& fusion, const BufferPlan& plan, int s) {
  const BufferSlot& b = plan.slots[s];
  const Node& n = g.node(b.value.def);
  const bool collective = as_collective(n.op).has_value();
  const int src = n.op == Op::Reshape || collective ? plan.slot_of(n.inputs[0]) : -1;
  const bool library = std::any_of(fusion.groups.begin(), fusion.groups.end(), [&](auto& grp) {
    return grp.kind == KernelKind::Library && grp.nodes.front() == b.value.def;
  });
  if (src != b.alias || !library || b.storage != Storage::Arena ||
      plan.slots[src].storage != Storage::Arena || plan.slots[src].offset != b.offset ||
      plan.slots[src].bytes() != b.bytes())
    fail(g, b.value,
         "an alias that is not a library reshape or collective of an arena value at its offset");
  if (!collective) return;
  if (plan.slots[src].alias >= 0)
    fail(g, b.value, "a collective writes over an alias of another value");
  for (int t = 0; t < static_cast<int>(plan.slots.size()); ++t)
    if (aliases(plan, t, src) && !aliases(plan, t, s) && plan.slots[t].last > b.first)
      fail(g, b.value,
           fmt::format("a collective writes over {}, which launch {} reads later",
                       value_name(g, plan.slots[t].value), plan.slots[t].last));
}

// The elided nodes are, in ascending order, exactly the reshapes whose output is an alias.
void check_elided(const Graph& g, const BufferPlan& plan) {
  std::vector<int> want;
  for (const BufferSlot& b : plan.slots)
    if (b.alias >= 0 && g.node(b.value.def).op == Op::Reshape) want.push_back(b.value.def);
  std::sort(want.begin(), want.end());
  if (plan.elided != want)
    throw InternalError(fmt::format("invalid buffer plan: elided nodes [{}], aliased reshapes [{}]",
                                    fmt::join(plan.elided, ", "), fmt::join(want, ", ")));
}

// Arena slots whose live ranges meet must not share a byte, unless one aliases the other.
void check_arena(const Graph& g, const BufferPlan& plan) {
  std::vector<int> arena;
  for (size_t s = 0; s < plan.slots.size(); ++s) {
    const BufferSlot& b = plan.slots[s];
    if (b.storage != Storage::Arena) continue;
    if (b.offset % kBufferAlign || b.offset < 0 || b.offset + b.bytes() > plan.arena_bytes)
      fail(g, b.value,
           fmt::format("arena range @{} +{} is misaligned or outside the arena of {}", b.offset,
                       b.bytes(), plan.arena_bytes));
    arena.push_back(static_cast<int>(s));
  }
  for (size_t i = 0; i < arena.size(); ++i)
    for (size_t j = i + 1; j < arena.size(); ++j) {
      const BufferSlot &a = plan.slots[arena[i]], &b = plan.slots[arena[j]];
      const bool live_together =
          std::max(a.first, b.first) <= std::min(a.live_until(), b.live_until());
      const bool overlap = a.offset < b.offset + b.bytes() && b.offset < a.offset + a.bytes();
      const bool aliased = alias_root(plan, arena[i]) == alias_root(plan, arena[j]);
      if (live_together && overlap && !aliased && a.bytes() > 0 && b.bytes() > 0)
        fail(g, a.value,
             fmt::format("shares arena bytes with {}, live at the same launch",
                         value_name(g, b.value)));
    }
}

// A value in a result's buffer is the operand of the collective that writes that result, which
// reduces in those bytes: nothing may read the value after that launch, nor see its bytes under
// another slot (an alias would be placed in the arena).
void check_in_result(const Graph& g, std::span<const PlannedLaunch> launches,
                     const BufferPlan& plan, std::span<const int> last, size_t s) {
  const BufferSlot& b = plan.slots[s];
  const int r = b.in_result;
  if (r < plan.num_params || r >= static_cast<int>(plan.slots.size()) ||
      plan.slots[r].storage != Storage::Result || plan.slots[r].bytes() != b.bytes())
    fail(g, b.value, fmt::format("in the buffer of slot {}, which is not a result of its size", r));
  const BufferSlot& out = plan.slots[r];
  const int node = launches[out.first].node;
  if (node < 0 || !as_collective(g.node(node).op) || g.node(node).inputs[0] != b.value)
    fail(g, b.value, fmt::format("in the buffer of {}, which is not a collective of it",
                                 value_name(g, out.value)));
  if (last[s] != out.first)
    fail(g, b.value,
         fmt::format("in the buffer of {}, but launch {} reads it later", value_name(g, out.value),
                     last[s]));
  for (const BufferSlot& a : plan.slots)
    if (a.alias == static_cast<int>(s))
      fail(g, b.value,
           fmt::format("in a result's buffer, and aliased by {}", value_name(g, a.value)));
}

void check_results_and_donations(const Graph& g, const FusionPlan& fusion,
                                 std::span<const PlannedLaunch> launches, const BufferPlan& plan,
                                 std::span<const int> last) {
  std::set<int> result_slots(plan.results.begin(), plan.results.end());
  for (size_t r = 0; r < g.results().size(); ++r)
    if (plan.results.at(r) != plan.slot_of(g.results()[r]))
      fail(g, g.results()[r], fmt::format("result {} is not in its slot", r));
  for (size_t s = plan.num_params; s < plan.slots.size(); ++s) {
    const BufferSlot& b = plan.slots[s];
    const bool is_result = result_slots.count(static_cast<int>(s)) > 0;
    if (is_result == (b.storage == Storage::Arena || b.storage == Storage::InResult))
      fail(g, b.value,
           fmt::format("{} in {} storage", is_result ? "a result" : "an intermediate",
                       storage_name(b.storage)));
    if (b.storage == Storage::InResult) check_in_result(g, launches, plan, last, s);
    if (b.storage != Storage::Donated) continue;
    const int p = b.donor;
    if (p < 0 || p >= plan.num_params || g.params()[p].type.bytes() != b.type.bytes())
      fail(g, b.value, fmt::format("cannot take over parameter {}", p));
    if (result_slots.count(p)) fail(g, b.value, "its donor is itself a result");
    if (last[p] > b.first) fail(g, b.value, "its donor is read after it is written");
    if (last[p] == b.first) {
      const PlannedLaunch& l = launches[b.first];
      if (!b.in_place || l.node >= 0 || !can_write_in_place(g, fusion.groups[l.group], b.value, p))
        fail(g, b.value, "written over its donor by a launch that reads the donor");
    }
  }
}

}  // namespace

std::vector<PlannedLaunch> launch_sequence(const Graph& g, const FusionPlan& plan,
                                           const KernelRules& rules) {
  std::vector<PlannedLaunch> out;
  for (int gi = 0; gi < static_cast<int>(plan.groups.size()); ++gi) {
    const FusionGroup& grp = plan.groups[gi];
    if (grp.kind == KernelKind::Loop) {
      out.push_back({gi, -1, grp.inputs, grp.outputs});
      continue;
    }
    if (grp.kind == KernelKind::Epilogue) {
      // One launch. A library output the loop alone reads, written whole, needs a slot too.
      PlannedLaunch l{gi, -1, grp.inputs, grp.outputs};
      const Value lib = Value::node(grp.nodes.front());
      if (rules.epilogue_materializes(g, grp) &&
          std::find(l.writes.begin(), l.writes.end(), lib) == l.writes.end())
        l.writes.insert(l.writes.begin(), lib);
      out.push_back(std::move(l));
      continue;
    }
    for (int id : grp.nodes) {
      PlannedLaunch l{gi, id, g.node(id).inputs, {}};
      for (int k = 0; k < g.num_outputs(id); ++k) l.writes.push_back(Value::node(id, k));
      out.push_back(std::move(l));
    }
  }
  return out;
}

bool can_write_in_place(const Graph& g, const FusionGroup& grp, Value out, int param) {
  if (grp.kind == KernelKind::Epilogue) {
    // The library node reads its inputs while blocks of the loop's outputs are being written.
    const Node& lib = g.node(grp.nodes.front());
    if (std::find(lib.inputs.begin(), lib.inputs.end(), Value::param(param)) != lib.inputs.end())
      return false;
    return can_write_in_place(g, epilogue_loop(g, grp), out, param);
  }
  if (grp.kind != KernelKind::Loop || out.is_param()) return false;
  if (g.params()[param].type.shape != grp.shape || g.type(out).shape != grp.shape) return false;
  // The nodes of the group that read the donor, directly or through others of the group, must
  // all be elementwise: a view (expand, a folded permute or slice) or a reduction of it reads it
  // at other indices than the one being written. Views of other values (a gradient sliced out
  // of its all-reduce bucket) read no byte of the donor. `out` must be one of those nodes.
  const Value p = Value::param(param);
  std::vector<int> nodes(grp.nodes.begin(), grp.nodes.end());
  std::sort(nodes.begin(), nodes.end());  // node ids are in topological order
  std::set<int> reads_donor;
  for (int id : nodes) {
    const Node& n = g.node(id);
    const bool reads = std::any_of(n.inputs.begin(), n.inputs.end(), [&](Value v) {
      return v == p || (!v.is_param() && reads_donor.count(v.def) > 0);
    });
    if (!reads) continue;
    if (!as_elementwise(n.op)) return false;
    reads_donor.insert(id);
  }
  return reads_donor.count(out.def) > 0;
}

void verify_buffer_plan(const Graph& g, const FusionPlan& fusion, const BufferPlan& plan,
                        const KernelRules& rules) {
  const std::vector<PlannedLaunch> launches = launch_sequence(g, fusion, rules);
  if (plan.num_params != static_cast<int>(g.params().size()) ||
      plan.num_launches != static_cast<int>(launches.size()))
    throw InternalError(
        fmt::format("invalid buffer plan: {} parameters and {} launches, graph has "
                    "{} and {}",
                    plan.num_params, plan.num_launches, g.params().size(), launches.size()));
  for (int p = 0; p < plan.num_params; ++p)
    if (plan.slots.at(p).storage != Storage::Param || plan.slots[p].value != Value::param(p))
      fail(g, Value::param(p), "parameter slot out of place");
  const std::vector<int> last = check_slots(g, launches, plan);
  for (int s = 0; s < static_cast<int>(plan.slots.size()); ++s)
    if (plan.slots[s].alias >= 0) check_alias(g, fusion, plan, s);
  check_elided(g, plan);
  check_arena(g, plan);
  check_results_and_donations(g, fusion, launches, plan, last);
}

MemoryReport memory_report(const Graph& g, const BufferPlan& plan) {
  MemoryReport r;
  r.inputs = static_cast<int>(g.params().size());
  for (const Param& p : g.params()) r.input_bytes += static_cast<int64_t>(p.type.bytes());
  std::set<int> donors;
  for (const BufferSlot& b : plan.slots)
    if (b.storage == Storage::Donated) donors.insert(b.donor);
  r.donated_inputs = static_cast<int>(donors.size());
  for (int p : donors) r.donated_bytes += static_cast<int64_t>(g.params()[p].type.bytes());
  r.fresh_result_bytes = plan.result_bytes;
  r.arena_bytes = plan.arena_bytes;
  r.live_peak_bytes = plan.live_peak_bytes;
  r.naive_bytes = plan.naive_bytes;
  return r;
}

std::string print_memory_report(const MemoryReport& r) {
  auto mb = [](int64_t bytes) {
    return fmt::format("{:.2f} MB", static_cast<double>(bytes) / (1 << 20));
  };
  return fmt::format(
      "memory: inputs {} in {} tensors ({} in {} donated to results), fresh results {}, "
      "intermediates {} (live peak {}; {} without reuse), planned peak {}\n",
      mb(r.input_bytes), r.inputs, mb(r.donated_bytes), r.donated_inputs,
      mb(r.fresh_result_bytes), mb(r.arena_bytes), mb(r.live_peak_bytes), mb(r.naive_bytes),
      mb(r.planned_peak_bytes()));
}

std::string print_buffer_plan(const Graph& g, const BufferPlan& plan) {
  std::string s = fmt::format(
      "buffers: {} launches, arena {} bytes (live peak {}), results {}, donated {}, naive {}\n",
      plan.num_launches, plan.arena_bytes, plan.live_peak_bytes, plan.result_bytes,
      plan.donated_bytes, plan.naive_bytes);
  for (size_t i = plan.num_params; i < plan.slots.size(); ++i) {
    const BufferSlot& b = plan.slots[i];
    s += fmt::format("{} {} {}", value_name(g, b.value), type_str(b.type), storage_name(b.storage));
    if (b.storage == Storage::Arena) s += fmt::format(" @{} +{}", b.offset, aligned(b.bytes()));
    if (b.alias >= 0) s += fmt::format(" alias {}", value_name(g, plan.slots[b.alias].value));
    if (plan.is_elided(b.value.def)) s += " (no launch)";
    if (b.storage == Storage::InResult)
      s += fmt::format(" {}", value_name(g, plan.slots[b.in_result].value));
    if (b.storage == Storage::Donated)
      s +=
          fmt::format(" {}{}", value_name(g, Value::param(b.donor)), b.in_place ? " in place" : "");
    if (b.last > b.first)
      s += fmt::format(" launches {}..{}\n", b.first, b.last);
    else
      s += fmt::format(" launch {}\n", b.first);
  }
  return s;
}

}  // namespace lt::ir
