// LLVM IR for Loop fusion groups: one function per group that computes rows of the group's
// (collapsed) iteration space, with views folded into the addresses of its loads and reductions
// accumulated along the way; the innermost loop is the one LLVM vectorizes.
#pragma once
#include <span>
#include <string>

#include "codegen/loop_nest.h"
#include "ir/fusion_plan.h"
#include "ir/kernel_rules.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace lt::codegen {

/// Whether the emitter supports every node and dtype of the group: the loop kernel contract
/// (ir::loop_roles) with every compute node and reduction one `rules` take on, as passes::fuse
/// makes them. The group must pass ir::verify_fusion_plan.
bool can_emit_loop(const ir::Graph& g, const ir::FusionGroup& group, const ir::KernelRules& rules);

/// Adds `void name(ptr buffers, i64 row_begin, i64 row_end)` to `m`; `buffers` holds the data of
/// group.inputs then group.outputs, in order (rt::LoopKernelFn). No two buffers may overlap but
/// where `written_over[k] >= 0`: output k is then written over input written_over[k] (its donor,
/// which the group reads at the element it writes), and is stored through that input's pointer,
/// so the pointers the kernel uses stay noalias and its loops vectorize without overlap checks.
/// Empty: no output is written over an input. `keep_outer_dim` keeps iteration dim 0 from merging
/// with the dims inside it, so that the rows split by its index (an epilogue that runs image by
/// image).
LoopShape emit_loop_kernel(llvm::Module& m, const ir::Graph& g, const ir::FusionGroup& group,
                           const std::string& name, std::span<const int> written_over = {},
                           bool keep_outer_dim = false);

}  // namespace lt::codegen
