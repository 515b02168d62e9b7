// The order of a fusion plan's kernels: a topological order close to trace order, kernels that
// check data at run time hoisted as early as their inputs allow, and collectives started as
// early as their operands allow.
#pragma once
#include <span>
#include <vector>

#include "ir/fusion_plan.h"

namespace lt::passes {

/// A topological order of the kernel DAG (`kernel[node]` numbers kernels 0 .. num_kernels-1),
/// ties broken by the lower number, so the plan reads close to trace order.
std::vector<int> schedule_kernels(const ir::Graph& g, std::span<const int> kernel,
                                  int num_kernels);

/// Re-orders the groups: among groups whose inputs are ready, those whose nodes check data at run
/// time (ir::checks_data_at_run_time) come first, so they run before in-place (donated) writes;
/// then collectives and the groups nearest to starting one (the least work left before it, in
/// bytes read and written), so that collectives start early and the rest runs while they are in
/// flight; then the original order. Dependencies stay satisfied, so inputs and outputs are
/// unchanged. Returns whether the order changed.
bool order_groups(const ir::Graph& g, ir::FusionPlan& plan);

}  // namespace lt::passes
