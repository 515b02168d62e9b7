// The lowering: traced graph -> optimized graph, fusion plan and buffer plan, ready for codegen.
// This file fixes the order of the stages; a compiled step (frontend), lt-opt and the tests all
// lower through it.
#pragma once
#include <span>
#include <string>

#include "passes/lowered_graph.h"
#include "passes/pass_log.h"

namespace lt::passes {

/// Runs verify -> canonicalize -> fold -> canonicalize -> cse -> channels_last ->
/// absorb_widening_casts -> narrow_norm_gradients -> wide_gemm_results -> sink_reshapes -> dce ->
/// bucket_all_reduce -> fuse -> buffer_plan
/// on g through `log`, which times, verifies and dumps each stage. Throws lt::Error when g is
/// malformed on entry.
LoweredGraph lower(ir::Graph g, const LowerOptions& o, PassLog& log);

/// Runs registered stages by name, in order ("pipeline" is lower() on the current graph).
/// An unknown name is an lt::Error naming it.
void run_passes(LoweredGraph& l, std::span<const std::string> names, const LowerOptions& o,
                PassLog& log);

}  // namespace lt::passes
