// Collectives in flight: each collective's kernel starts where the plan puts it and is awaited
// just before the first kernel that reads its result, so that the kernels in between (the rest
// of the backward pass, for a replica's gradient buckets) run while it communicates.
#pragma once
#include "ir/fusion_plan.h"
#include "ir/graph.h"

namespace lt::passes {

/// Sets ir::FusionGroup::awaited_before of every collective's group: the first later group that
/// reads its result, or the number of groups when none does. Returns whether it changed any.
bool schedule_collectives(const ir::Graph& g, ir::FusionPlan& plan);

}  // namespace lt::passes
