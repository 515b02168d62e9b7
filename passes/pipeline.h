// The lowering: traced graph -> optimized graph, fusion plan and buffer plan, ready for codegen.
// This file fixes the order of the stages (passes/stages.def names them); a compiled step, lt-opt,
// lt-ir and the tests all lower through it.
#pragma once
#include <span>
#include <string>

#include "passes/lowered_graph.h"
#include "passes/pass_log.h"

namespace lt::passes {

/// Runs, through `log` (which times, verifies and dumps each stage):
///   verify
///   simplify:        canonicalize, fold, canonicalize, cse           (o.simplify)
///   layout and AMP:  channels_last (o.channels_last), absorb_widening_casts,
///                    narrow_norm_gradients, wide_gemm_results (o.wide_gemm_results)
///   more simplify:   sink_reshapes, fold_relu_into_pool_grad          (o.simplify)
///   dce, bucket_all_reduce
///   kernels:         fuse, attach_epilogues (o.fusion.enabled and o.fusion.epilogues),
///                    order_kernels, schedule_collectives
///   buffer_plan
/// Throws lt::Error when g is malformed on entry.
LoweredGraph lower(ir::Graph g, const LowerOptions& o, PassLog& log);

/// The kernel stages of lower() alone, in its order (fuse, attach_epilogues, order_kernels,
/// schedule_collectives), through `log`: l gets the fusion plan lower() would make of its graph.
void plan_kernels(LoweredGraph& l, const LowerOptions& o, PassLog& log);
/// plan_kernels on a bare graph, for lt-ir and tests.
ir::FusionPlan fusion_plan(const ir::Graph& g, const LowerOptions& o = {});
ir::FusionPlan fusion_plan(const ir::Graph& g, const FuseOptions& o);

/// The options a compiled step is lowered under at opt level `level` (1: the passes and one
/// kernel call per op; 2: also fusion into loop kernels and epilogues): `requested` with what
/// that level turns off, so that an option without effect at the level never tells two
/// compiles apart.
LowerOptions at_opt_level(LowerOptions requested, int level);
/// A hash of every option of `o`: the part of a compiled step's cache key that the options make.
uint64_t options_key(const LowerOptions& o);

/// Runs registered stages by name, in order ("pipeline" is lower() on the current graph).
/// An unknown name is an lt::Error naming it.
void run_passes(LoweredGraph& l, std::span<const std::string> names, const LowerOptions& o,
                PassLog& log);

}  // namespace lt::passes
