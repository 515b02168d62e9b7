// What a loop kernel (ir::KernelKind::Loop) may hold, as roles of its nodes, and the backend's
// choices of what one takes on: the reductions it may end in, the library calls it may follow as
// an epilogue. Shared by passes/fuse, the plan's verifier and codegen's loop emitter.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "ir/fusion_plan.h"
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

/// Whether a loop kernel computes node `id` (an elementwise op) itself: on compute dtypes, bf16
/// and f16 only through a cast (they are storage types), and never an op whose eager kernel
/// checks the data (integer division: a loop kernel cannot throw). Any other node of lowering
/// Loop runs as a library kernel of its own.
bool loop_computes(const Graph& g, int id);
/// The same rule for an op on operands of dtype `in` with result dtype `out`.
bool loop_computes(Op op, DType in, DType out);
/// Ops that may fold into index maps (lowering IndexMap: every view).
bool is_foldable_view(Op op);
/// Reductions a loop kernel may end in: lowering LoopReduce (sum/mean/max/min), of a compute
/// dtype other than bool, reducing at least two elements per output, none empty.
bool is_loop_reduction(const Graph& g, int id);
/// The reduced axes of a reduction node, sorted ("every axis" spelled out).
Ints reduced_axes(const Graph& g, int id);

/// Roles of `nodes` (topological order), given that exactly these nodes form the kernel.
std::vector<LoopRole> loop_roles(const Graph& g, std::span<const int> nodes);

/// Library nodes an epilogue may follow: lowering Epilogue or ImgEpilogue (matmul, conv2d), with
/// one float output (bf16 and f16 included: autocast's cast back to f32 then runs in the
/// epilogue).
bool takes_epilogue(const Graph& g, int id);

/// Whether an Epilogue group's library output is written whole before the loop runs (matmul, or
/// a value other kernels read) rather than block by block into scratch (conv2d).
bool epilogue_materializes(const Graph& g, const FusionGroup& grp);

}  // namespace lt::ir
