#include "passes/collective_schedule.h"

#include <algorithm>

namespace lt::passes {

bool schedule_collectives(const ir::Graph& g, ir::FusionPlan& plan) {
  const int n = static_cast<int>(plan.groups.size());
  bool changed = false;
  for (int k = 0; k < n; ++k) {
    ir::FusionGroup& grp = plan.groups[k];
    if (grp.kind != ir::KernelKind::Library || grp.nodes.size() != 1 ||
        !ir::as_collective(g.node(grp.nodes[0]).op))
      continue;
    const ir::Value out = ir::Value::node(grp.nodes[0]);
    int reader = k + 1;
    auto reads = [&](const ir::FusionGroup& r) {
      return std::find(r.inputs.begin(), r.inputs.end(), out) != r.inputs.end();
    };
    while (reader < n && !reads(plan.groups[reader])) ++reader;
    changed |= grp.awaited_before != reader;
    grp.awaited_before = reader;
  }
  return changed;
}

}  // namespace lt::passes
