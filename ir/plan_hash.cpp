#include "ir/plan_hash.h"

#include "ir/structural_hash.h"

namespace lt::ir {
namespace {

void add_values(Hasher& h, const std::vector<Value>& vs) {
  h.add(vs.size());
  for (Value v : vs) h.add(value_key(v));
}

}  // namespace

uint64_t plan_hash(const FusionPlan& plan) {
  Hasher h(0x66757365ULL);
  h.add(plan.groups.size());
  for (const FusionGroup& g : plan.groups) {
    h.add(static_cast<uint64_t>(g.kind));
    h.add(g.nodes.size());
    for (int n : g.nodes) h.add(static_cast<uint64_t>(n));
    add_values(h, g.inputs);
    add_values(h, g.outputs);
    h.add(TensorType{DType::Bool, g.shape});
    h.add(static_cast<uint64_t>(g.awaited_before + 1));
  }
  return h.value();
}

uint64_t plan_hash(const BufferPlan& plan) {
  Hasher h(0x62756673ULL);
  h.add(static_cast<uint64_t>(plan.num_params)).add(static_cast<uint64_t>(plan.num_launches));
  h.add(plan.slots.size());
  for (const BufferSlot& s : plan.slots) {
    h.add(value_key(s.value)).add(s.type).add(static_cast<uint64_t>(s.storage));
    h.add(static_cast<uint64_t>(s.offset)).add(static_cast<uint64_t>(s.donor));
    h.add(s.in_place ? 1 : 0).add(static_cast<uint64_t>(s.first));
    h.add(static_cast<uint64_t>(s.last)).add(static_cast<uint64_t>(s.alias));
    h.add(static_cast<uint64_t>(s.in_result));
  }
  h.add(plan.node_slots.size());
  for (const std::vector<int>& per_node : plan.node_slots) {
    h.add(per_node.size());
    for (int s : per_node) h.add(static_cast<uint64_t>(s));
  }
  h.add(plan.results.size());
  for (int r : plan.results) h.add(static_cast<uint64_t>(r));
  h.add(plan.elided.size());
  for (int e : plan.elided) h.add(static_cast<uint64_t>(e));
  return h.add(static_cast<uint64_t>(plan.arena_bytes)).value();
}

}  // namespace lt::ir
