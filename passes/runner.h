// The generic runner of the lowering's stages (passes/stages.def): one stage, which is what a
// backend's recipe is written in, or stages by name (lt-opt --passes=...). The order of a whole
// lowering is not written here: it is each backend's recipe (backends/), which runs these stages.
#pragma once
#include <functional>
#include <span>
#include <string>

#include "passes/lowered_graph.h"
#include "passes/pass_log.h"
#include "passes/registry.h"

namespace lt::passes {

/// Runs stage `s` on `l` through `log` (timed, verified, dumped). Returns whether it changed the
/// graph or a plan.
bool run_stage(LoweredGraph& l, Stage s, const LowerOptions& o, PassLog& log);

/// A backend's whole lowering of a traced graph (its recipe), which the name "pipeline" runs.
using Pipeline = std::function<LoweredGraph(ir::Graph, const LowerOptions&, PassLog&)>;

/// Runs registered stages by name, in order ("pipeline" is `pipeline` on the current graph).
/// An unknown name is an lt::Error naming it.
void run_passes(LoweredGraph& l, std::span<const std::string> names, const LowerOptions& o,
                PassLog& log, const Pipeline& pipeline);

}  // namespace lt::passes
