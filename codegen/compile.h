// Graph + fusion plan + buffer plan -> Executable: Loop groups become JIT-compiled kernels,
// everything else calls the eager kernels, slots live where the buffer plan says. The CPU
// backend's codegen (backends/cpu/), which reaches it through its compile entry; no LLVM here.
#pragma once
#include <memory>
#include <string>

#include "codegen/compile_options.h"
#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "ir/kernel_rules.h"
#include "runtime/executable.h"

namespace lt::codegen {

/// Bumped whenever the emitted code for the same graph changes (emitters, lowering): on-disk
/// objects of an older codegen are then never reused.
inline constexpr int kCodegenVersion = 15;

/// The on-disk cache key of the code for this graph and these plans: a hash of the op table, the
/// backend whose rules made the plans, the graph's structure, both plans, kCodegenVersion and the
/// host CPU with its features, as 16 hex digits.
std::string object_key(const ir::Graph& g, const ir::FusionPlan& plan,
                       const ir::BufferPlan& buffers, const ir::KernelRules& rules);

/// Translates the plans, deciding nothing: `plan` must be the lowering's under `rules` (a
/// backend's recipe: every Loop kernel one the emitter can compute, collectives scheduled) and
/// `buffers` passes::plan_buffers(g, plan, rules) or another plan that passes
/// ir::verify_buffer_plan for them. `rules` also say which epilogue outputs are written whole.
std::shared_ptr<rt::Executable> compile(const ir::Graph& g, const ir::FusionPlan& plan,
                                        const ir::BufferPlan& buffers, const ir::KernelRules& rules,
                                        const CompileOptions& options,
                                        CompileStats* stats = nullptr);

}  // namespace lt::codegen
