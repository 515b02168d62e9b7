// Graph + fusion plan + buffer plan -> Executable: Loop groups become JIT-compiled kernels,
// everything else calls the eager kernels, slots live where the buffer plan says. The public face
// of codegen (no LLVM here).
#pragma once
#include <memory>
#include <string>

#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "runtime/executable.h"

namespace lt::codegen {

/// Bumped whenever the emitted code for the same graph changes (emitters, lowering): on-disk
/// objects of an older codegen are then never reused.
inline constexpr int kCodegenVersion = 15;

struct CompileOptions {
  std::string dump_dir;     // non-empty: LLVM IR before/after optimization and assembly
  std::string dump_prefix;  // file stem for the dumps
  std::string cache_dir;    // non-empty: look up and store the object in this on-disk cache
                            // folder, under object_key
};

/// The on-disk cache key of the code for this graph and these plans: a hash of the op table, the
/// graph's structure, both plans, kCodegenVersion and the host CPU with its features, as 16 hex
/// digits.
std::string object_key(const ir::Graph& g, const ir::FusionPlan& plan,
                       const ir::BufferPlan& buffers);

struct CompileStats {
  int loop_kernels = 0;       // JIT-compiled fusion groups (epilogues included)
  int library_launches = 0;   // eager-kernel calls without a compiled epilogue
  double llvm_ms = 0;         // emit + optimize + codegen time
  std::string object_file;    // the disk-cache entry of the step's kernels; "" when not cached
};

/// Translates the plans, deciding nothing: `plan` must be the lowering's (passes::lower: every
/// Loop kernel one the emitter can compute, collectives scheduled) and `buffers`
/// passes::plan_buffers(g, plan) or another plan that passes ir::verify_buffer_plan for them.
std::shared_ptr<rt::Executable> compile(const ir::Graph& g, const ir::FusionPlan& plan,
                                        const ir::BufferPlan& buffers,
                                        const CompileOptions& options,
                                        CompileStats* stats = nullptr);

}  // namespace lt::codegen
