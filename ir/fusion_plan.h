// The fusion plan: a partition of a graph's nodes into kernels, in execution order. Plain data
// produced by passes/fuse and consumed by codegen (which never includes passes/). The index maps
// of loop kernels (views folded into index arithmetic) are derived here too, so that the fuser,
// the verifier and the emitter agree on what folds.
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

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
  /// epilogue_loop() and epilogue_materializes().
  Epilogue,
};

struct FusionGroup {
  KernelKind kind = KernelKind::Library;
  std::vector<int> nodes;      // node ids, topological order
  std::vector<Value> inputs;   // values the group reads from outside (parameters, other groups)
  std::vector<Value> outputs;  // group values read by later groups or returned as results
  Shape shape;                 // Loop: the iteration shape (a reduction's input shape);
                               // Epilogue: the library node's output shape
};

struct FusionPlan {
  std::vector<FusionGroup> groups;
};

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

/// Ops that may fold into index maps (every view: reshape permute expand slice concat pad).
bool is_foldable_view(Op op);
/// Reductions a loop kernel may end in: sum/mean/max/min of a compute dtype other than bool,
/// reducing at least two elements per output, none empty.
bool is_loop_reduction(const Graph& g, int id);
/// The reduced axes of a reduction node, sorted ("every axis" spelled out).
std::vector<int64_t> reduced_axes(const Graph& g, int id);

/// Roles of `nodes` (topological order), given that exactly these nodes form the kernel.
std::vector<LoopRole> loop_roles(const Graph& g, std::span<const int> nodes);

/// One way to read an element at an index `idx` of an index space: where lo[d] <= idx[d] < hi[d]
/// for every dim d, the element is source[offset + sum(stride[d] * idx[d])], or `fill` for a
/// constant piece (padding).
struct ReadPiece {
  Value source;
  bool constant = false;
  double fill = 0;
  int64_t offset = 0;
  std::vector<int64_t> stride, lo, hi;
};

/// How a loop kernel reads a value from outside it at each point of an index space (`shape`):
/// the first piece whose bounds hold gives the element. Views fold into the pieces: permute and
/// slice into strides and offsets, expand into zero strides, pad and concat into bounds, reshape
/// where the layout allows it (no bounds on, and contiguous runs across, the dims it regroups).
struct ReadMap {
  Shape shape;
  std::vector<ReadPiece> pieces;
};

/// The map by which a loop kernel reads `v` at iteration shape `iter` (v broadcasts to it). `v`
/// is a value from outside the kernel (`outside(v)`) or a view node whose operands are, through
/// any chain of views. nullopt: the views do not fold (a view of a value the kernel computes, a
/// reshape of a padded or strided layout it cannot express, ...).
std::optional<ReadMap> read_map(const Graph& g, Value v, const Shape& iter,
                                const std::function<bool(Value)>& outside);

/// Library nodes an epilogue may follow: matmul and conv2d with an f32 or f64 output.
bool takes_epilogue(const Graph& g, int id);

/// The loop kernel of an Epilogue group: its nodes after the first, over the group's shape, with
/// the library node's output as one of its inputs (read element by element, never through a
/// view). Inputs in first-use order; outputs are the group's other than the library output.
FusionGroup epilogue_loop(const Graph& g, const FusionGroup& grp);

/// Whether an Epilogue group's library output is written whole before the loop runs (matmul, or
/// a value other kernels read) rather than block by block into scratch (conv2d).
bool epilogue_materializes(const Graph& g, const FusionGroup& grp);

/// Sets every group's inputs (values from outside it, first use first) and outputs (values read
/// by another group or returned), both without duplicates; kernel[node] is the node's group.
/// Inputs are what the nodes read from outside, including through folded views.
void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups);

/// Every node in exactly one group; groups in an order that respects data dependencies; inputs
/// and outputs complete; Loop groups, and the loops of Epilogue groups, follow the loop kernel
/// contract (docs/IR.md, "Fusion plans"). Throws lt::InternalError naming the first violation.
void verify_fusion_plan(const Graph& g, const FusionPlan& plan);

/// The plan as text, one line per group, for dumps and golden tests:
///   kernel 0 loop f32[128,512]: %2 %3 %4 (in: %p0, %1; out: %4)
/// A loop kernel with reductions names the axes: "kernel 1 loop f32[8,32] reduce[1]: ...";
/// an epilogue group its library op: "kernel 2 conv2d+loop f32[8,4,6,6]: %3 %5 %6 (...)".
std::string print_fusion_plan(const Graph& g, const FusionPlan& plan);

/// The trivial plan: every node its own Library group (opt level 1 without fusion, and tests).
FusionPlan unfused_plan(const Graph& g);

}  // namespace lt::ir
