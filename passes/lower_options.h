// How a graph is lowered: the backend's kernel rules and the settings the stages read. One value
// decides the plans and keys the compiled code (options_key).
#pragma once
#include <cstdint>

#include "ir/kernel_rules.h"
#include "passes/bucket_all_reduce.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"

namespace lt::passes {

struct LowerOptions {
  /// What the backend's loop kernels take on (fuse, attach_epilogues, buffer_plan and the plan
  /// verifiers read them). A backend sets them (backends/backend.h): null here, since the values
  /// are a backend's, which passes/ never includes.
  const ir::KernelRules* rules = nullptr;
  /// canonicalize, fold, cse, sink_reshapes and fold_relu_into_pool_grad; off leaves verify and
  /// dce (bisecting)
  bool simplify = true;
  bool channels_last = true;  ///< convolutions on [N, H, W, C] activations (passes/channels_last.h)
  bool wide_gemm_results = true;  ///< narrow GEMMs keep f32 results (passes/wide_gemm_results.h)
  FuseOptions fusion;  ///< fusion.enabled = false: every node its own kernel (opt level 1)
  BufferPlanOptions buffers;
  BucketOptions buckets;  ///< how all_reduces are packed (replicas' gradients)
};

/// o.rules; an lt::InternalError when there are none (options that no backend filled in).
const ir::KernelRules& kernel_rules(const LowerOptions& o);

/// The options a compiled step is lowered under at opt level `level` (1: the passes and one
/// kernel call per op; 2: also fusion into loop kernels and epilogues): `requested` with what
/// that level turns off, so that an option without effect at the level never tells two
/// compiles apart.
LowerOptions at_opt_level(LowerOptions requested, int level);
/// A hash of every option of `o`, the backend its rules are of included: the part of a compiled
/// step's cache key that the options make.
uint64_t options_key(const LowerOptions& o);

}  // namespace lt::passes
