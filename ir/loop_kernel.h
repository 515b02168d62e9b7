// What a loop kernel (ir::KernelKind::Loop) may hold, as roles of its nodes: the contract every
// backend's loop kernels share, which the fuser, the plan's verifier and codegen's loop emitter
// read alike. Which nodes of a role one backend's loop kernels take on is that backend's
// (ir::KernelRules).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

/// What a node does inside a loop kernel; a function of the node and of which of its operands
/// the kernel computes itself (loop_roles).
enum class LoopRole : uint8_t {
  /// Elementwise (or expand of a value the kernel computes): one value per iteration point.
  Compute,
  /// A view whose operands all come from outside the kernel or are folded views: it is an index
  /// map, loaded where a node reads it. Written only if its shape is the iteration shape.
  FoldedView,
  /// A reshape of a value the kernel computes (or reduces): the same elements in the same order,
  /// so the same register, written with the other shape.
  Alias,
  /// sum/mean/max/min over the iteration shape: accumulated over the reduced axes.
  Reduction,
  /// Anything else: not allowed in a loop kernel.
  Invalid,
};

/// Ops that may fold into index maps (loop form IndexMap: every view).
bool is_foldable_view(Op op);
/// The reduced axes of a reduction node, sorted ("every axis" spelled out).
Ints reduced_axes(const Graph& g, int id);

/// Roles of `nodes` (topological order), given that exactly these nodes form the kernel. A node
/// of loop form Elementwise is Compute and one of loop form Reduction a Reduction whether or not
/// the backend's rules take it on (KernelRules::computes, KernelRules::loop_reduction).
std::vector<LoopRole> loop_roles(const Graph& g, std::span<const int> nodes);

}  // namespace lt::ir
