// Fusion: partitions a graph's nodes into loop kernels and library calls (ir/fusion_plan.h).
#pragma once
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/kernel_rules.h"

namespace lt::passes {

struct FuseOptions {
  bool enabled = true;            // false: ir::unfused_plan, every node its own library kernel
  int max_nodes_per_kernel = 64;  // a loop kernel never grows past this many nodes
  int max_reductions_per_kernel = 4;  // reductions (all over the same axes) one loop kernel ends in
  bool epilogues = true;  // the attach_epilogues stage runs (passes/epilogue.h)
};

/// Groups elementwise nodes of one iteration shape into Loop kernels, with the views they read
/// from outside folded into index maps (ir::read_map), reshapes of their values as aliases, and
/// sum/mean/max/min reductions of the iteration shape at the end (ir::LoopRole), as far as the
/// backend's `rules` take them on. Every other node (matmul, conv, nn ops, creation ops including
/// `full`, argmax/logsumexp, views no loop kernel folds) is a Library kernel of its own.
/// Producer-consumer fusion in node order, never duplicating a node (so an expensive value read
/// more than once is computed once and written) and never creating a cycle between kernels; the
/// views no compute node joined are library kernels of one node each. Groups come in a
/// topological order close to trace order; the plan passes ir::verify_fusion_plan under the same
/// rules. Near-linear in the graph size. o.enabled = false gives ir::unfused_plan. The stages
/// after it (fuse_view_chains, fuse_siblings, attach_epilogues, order_kernels,
/// schedule_collectives) refine the plan: a backend's fusion_plan runs them all, as its recipe
/// does (backends/backend.h).
ir::FusionPlan fuse(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o = {});

/// The view chains of a plan fuse() made, whose views run as library kernels, become one loop
/// kernel each where that saves a copy: a chain that ends in a concat (a gradient bucket's pack)
/// or holds two or more views that copy (a reshape of an intermediate copies nothing: the buffer
/// plan aliases it), such as attention's head split (slice, then permute), is read through the
/// views' composed index map in one pass. A chain is the views joined by single-use links while
/// they still fold into one map, as fuse() meets them. Returns whether any chain became a kernel.
/// A plan with epilogues is an lt::Error (this stage comes before attach_epilogues).
bool fuse_view_chains(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o,
                      ir::FusionPlan& plan);

/// Horizontal fusion of a plan fuse() made: loop kernels that read the same full-size value
/// merge where the merged kernel holds (the contract, the rules, o's limits) and no path joins
/// them through another kernel, so the value is read once and a launch goes away; a view
/// chain's copy kernel stays apart. Returns whether any merged. A plan with epilogues is an
/// lt::Error (this stage comes before attach_epilogues).
bool fuse_siblings(const ir::Graph& g, const ir::KernelRules& rules, const FuseOptions& o,
                   ir::FusionPlan& plan);

}  // namespace lt::passes
