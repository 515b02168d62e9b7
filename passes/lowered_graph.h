// What the lowering works on and hands to codegen: the optimized graph and, once the fuse and
// buffer_plan stages have run on it, its fusion plan and buffer plan.
#pragma once
#include <optional>

#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "passes/bucket_all_reduce.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"

namespace lt::passes {

/// How a graph is lowered; it decides the plans, which key the compiled code.
struct LowerOptions {
  /// canonicalize, fold, cse, sink_reshapes and fold_relu_into_pool_grad; off leaves verify and
  /// dce (bisecting)
  bool simplify = true;
  bool channels_last = true;  ///< convolutions on [N, H, W, C] activations (passes/channels_last.h)
  bool wide_gemm_results = true;  ///< narrow GEMMs keep f32 results (passes/wide_gemm_results.h)
  FuseOptions fusion;    ///< fusion.enabled = false: every node its own kernel (opt level 1)
  BufferPlanOptions buffers;
  BucketOptions buckets;  ///< how all_reduces are packed (replicas' gradients)
};

struct LoweredGraph {
  ir::Graph graph;
  std::optional<ir::FusionPlan> fusion;   ///< set by the fuse stage
  std::optional<ir::BufferPlan> buffers;  ///< set by the buffer_plan stage (after fuse)
};

}  // namespace lt::passes
