// The CPU backend's recipe: the order in which it runs the registered stages of the lowering
// (passes/stages.def). A second backend writes its own from the same stages.
#pragma once
#include "passes/lowered_graph.h"
#include "passes/pass_log.h"

namespace lt::backends {

/// Runs, through `log` (which times, verifies and dumps each stage), under `o` (whose rules are
/// the CPU's):
///   verify
///   simplify:        canonicalize, fold, canonicalize, cse           (o.simplify)
///   layout and AMP:  channels_last (o.channels_last), absorb_widening_casts,
///                    narrow_norm_gradients, wide_gemm_results (o.wide_gemm_results)
///   more simplify:   sink_reshapes, fold_relu_into_pool_grad          (o.simplify)
///   dce, bucket_all_reduce
///   kernels:         cpu_kernel_recipe
///   buffer_plan
/// Throws lt::Error when g is malformed on entry.
passes::LoweredGraph cpu_recipe(ir::Graph g, const passes::LowerOptions& o, passes::PassLog& log);

/// The kernel stages of cpu_recipe alone, in its order: fuse, attach_epilogues
/// (o.fusion.enabled and o.fusion.epilogues), order_kernels, schedule_collectives.
void cpu_kernel_recipe(passes::LoweredGraph& l, const passes::LowerOptions& o,
                       passes::PassLog& log);

}  // namespace lt::backends
