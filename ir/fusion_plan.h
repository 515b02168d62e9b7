// The fusion plan: a partition of a graph's nodes into kernels, in execution order. Plain data
// produced by passes/fuse and consumed by codegen (which never includes passes/). What a loop
// kernel may hold is ir/loop_kernel.h, what one backend's take on ir/kernel_rules.h, and how they
// read views ir/read_map.h, so that the fuser, the verifier and the emitter agree on what folds.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

struct KernelRules;

enum class KernelKind : uint8_t {
  /// One loop nest over an iteration shape: elementwise nodes, views folded into the index maps
  /// of the inputs they read, and reductions that end the kernel (see LoopRole).
  Loop,
  /// One node run by its eager kernel (matmul, conv, nn ops, creation ops, lone views ...).
  Library,
  /// A matmul or conv2d (the first node) whose output a loop kernel (the other nodes: elementwise
  /// nodes and folded views of other values, no reductions) consumes as the eager kernel
  /// finishes it: conv2d image by image, each image's output still in cache (and never written
  /// to memory unless another kernel reads it); matmul once the GEMM is done. See
  /// epilogue_loop() and KernelRules::epilogue_materializes.
  Epilogue,
};

struct FusionGroup {
  KernelKind kind = KernelKind::Library;
  std::vector<int> nodes;      // node ids, topological order
  std::vector<Value> inputs;   // values the group reads from outside (parameters, other groups)
  std::vector<Value> outputs;  // group values read by later groups or returned as results
  Shape shape;                 // Loop: the iteration shape (a reduction's input shape);
                               // Epilogue: the library node's output shape
  /// A collective's group that runs asynchronously: it starts where it stands and is awaited
  /// just before group `awaited_before` (the number of groups: at the end), so the groups in
  /// between run while it is in flight. -1: it completes in its own launch.
  int awaited_before = -1;
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
};

/// The loop kernel of an Epilogue group: its nodes after the first, over the group's shape, with
/// the library node's output as one of its inputs (read element by element, never through a
/// view). Inputs in first-use order; outputs are the group's other than the library output.
FusionGroup epilogue_loop(const Graph& g, const FusionGroup& grp);

/// Sets every group's inputs (values from outside it, first use first) and outputs (values read
/// by another group or returned), both without duplicates; kernel[node] is the node's group.
/// Inputs are what the nodes read from outside, including through folded views.
void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups);

/// Every node in exactly one group; groups in an order that respects data dependencies; inputs
/// and outputs complete; Loop groups, and the loops of Epilogue groups, follow the loop kernel
/// contract (docs/IR.md, "Fusion plans") and hold only what `rules` (the backend's that made the
/// plan) take on. Throws lt::InternalError naming the first violation.
void verify_fusion_plan(const Graph& g, const FusionPlan& plan, const KernelRules& rules);

/// The values as text, "%0, %p1" ("-" for none), as the plan's text lists them.
std::string value_list(const Graph& g, std::span<const Value> vs);

/// The plan as text, one line per group, for dumps and golden tests:
///   kernel 0 loop f32[128,512]: %2 %3 %4 (in: %p0, %1; out: %4)
/// An asynchronous collective says where it is awaited:
///   kernel 3 library all_reduce: %7 (in: %6; out: %7) awaited before kernel 5
/// A loop kernel with reductions names the axes: "kernel 1 loop f32[8,32] reduce[1]: ...";
/// an epilogue group its library op: "kernel 2 conv2d+loop f32[8,4,6,6]: %3 %5 %6 (...)".
std::string print_fusion_plan(const Graph& g, const FusionPlan& plan);

/// The trivial plan: every node its own Library group (opt level 1 without fusion, and tests).
FusionPlan unfused_plan(const Graph& g);

}  // namespace lt::ir
