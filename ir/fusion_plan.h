// The fusion plan: a partition of a graph's nodes into kernels, in execution order. Plain data
// produced by passes/fuse and consumed by codegen (which never includes passes/).
#pragma once
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

enum class KernelKind : uint8_t {
  /// Elementwise nodes (and `expand` broadcasts) over one iteration shape: one loop nest.
  Loop,
  /// One node run by its eager kernel (matmul, conv, reductions, views ... until they fuse).
  Library,
};

struct FusionGroup {
  KernelKind kind = KernelKind::Library;
  std::vector<int> nodes;      // node ids, topological order
  std::vector<Value> inputs;   // values the group reads from outside (parameters, other groups)
  std::vector<Value> outputs;  // group values read by later groups or returned as results
  Shape shape;                 // Loop: the iteration shape (every output has it)
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
};

/// Sets every group's inputs (values from outside it, first use first) and outputs (values read
/// by another group or returned), both without duplicates; kernel[node] is the node's group.
void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups);

/// Every node in exactly one group; groups in an order that respects data dependencies; inputs
/// and outputs complete; Loop groups hold only elementwise/expand nodes of the group's shape.
/// Throws lt::InternalError naming the first violation.
void verify_fusion_plan(const Graph& g, const FusionPlan& plan);

/// The plan as text, one line per group, for dumps and golden tests:
///   kernel 0 loop f32[128,512]: %2 %3 %4 (in: %p0, %1; out: %4)
std::string print_fusion_plan(const Graph& g, const FusionPlan& plan);

/// The trivial plan: every node its own Library group (opt level 1 without fusion, and tests).
FusionPlan unfused_plan(const Graph& g);

}  // namespace lt::ir
