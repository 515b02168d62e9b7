// A backend's choices of what its loop kernels take on, as plain data: which elementwise nodes a
// loop kernel computes, which reductions it ends in, which views it folds, which library calls it
// follows as an epilogue. ir/loop_kernel.h is the contract every backend's loop kernels share
// (what the roles of their nodes mean); these rules are what one backend fills in. The type lives
// here, under everything that takes it (the fuser in passes/, the plan verifiers here, codegen),
// so that none of them depends on a backend; the values live in the backend's folder
// (backends/cpu/cpu_kernel_rules.cpp), which only the layers above include.
#pragma once
#include <cstddef>
#include <string_view>

#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/read_map.h"

namespace lt::ir {

struct KernelRules {
  /// The backend the rules are of ("cpu"): messages and the cache keys of what they plan name it.
  std::string_view backend;
  /// Whether a loop kernel computes node `id` of loop form Elementwise itself; the fuser makes
  /// any other such node a library kernel of its own.
  bool (*computes)(const Graph& g, int id) = nullptr;
  /// Whether a loop kernel may end in reduction `id` (loop form Reduction); the fuser makes any
  /// other reduction a library kernel of its own.
  bool (*loop_reduction)(const Graph& g, int id) = nullptr;
  /// Whether the fuser lets a loop kernel read a value of `elem_bytes`-byte elements through the
  /// index map `m` of the views it reads (which ir::read_map found to fold) rather than leaving
  /// those views to library kernels: a cost rule, which the plan verifier does not check.
  bool (*folds_view)(const ReadMap& m, size_t elem_bytes) = nullptr;
  /// Whether library node `id` (loop form None) may be followed by a loop kernel as its
  /// epilogue, run in the same launch.
  bool (*takes_epilogue)(const Graph& g, int id) = nullptr;
  /// Whether the epilogue of library node `id` runs image by image, as the call finishes each
  /// image of its [N, ...] output, rather than once on the whole output.
  bool (*epilogue_by_image)(const Graph& g, int id) = nullptr;
  /// Whether an Epilogue group's library output is written whole before its loop runs, rather
  /// than block by block into scratch: the buffer plan then gives it a slot.
  bool (*epilogue_materializes)(const Graph& g, const FusionGroup& grp) = nullptr;
};

}  // namespace lt::ir
