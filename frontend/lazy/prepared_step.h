// A graph ready to run: the reference interpreter's form (opt level 0) or a compiled Executable
// (1: passes without fusion, 2: passes + fusion + LLVM loop kernels). The traced graph is kept
// for recompile explanations.
#pragma once
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "frontend/lazy/launch_profile.h"
#include "ir/graph.h"
#include "passes/lowered_graph.h"
#include "lt/lazy.h"
#include "runtime/executable.h"
#include "runtime/interpreter.h"

namespace lt::lazy {

class PreparedStep {
 public:
  const ir::Graph& traced() const { return traced_; }
  /// Whether its code came from the on-disk cache (no LLVM compile).
  bool disk_hit() const { return disk_hit_; }
  /// The disk-cache entry file of its kernels; "" when none (no loop kernels, or no disk cache).
  const std::string& object_file() const { return object_file_; }
  /// `owned_refs`: see rt::Executable::run (donation); the interpreter never donates.
  std::vector<rt::BufferPtr> run(std::span<const rt::BufferPtr> params,
                                 std::span<const long> owned_refs = {}) const;
  /// The compiled step (null at opt level 0): its memory plan and run counters.
  const rt::Executable* executable() const { return executable_.get(); }
  /// What the compiled step holds while it runs (null at opt level 0).
  const ir::MemoryReport* memory() const { return memory_ ? &*memory_ : nullptr; }

  /// Prepares `traced` (verified first) at the given options; `key` names dumps and the on-disk
  /// object cache entry.
  static std::shared_ptr<PreparedStep> prepare(ir::Graph traced, const CompileOptions& o,
                                               uint64_t key);

 private:
  ir::Graph traced_;
  std::unique_ptr<rt::InterpretedGraph> interpreted_;
  std::shared_ptr<rt::Executable> executable_;
  std::shared_ptr<LaunchProfile> profile_;  // launch labels and times (LT_PROFILE)
  mutable std::atomic<bool> profile_registered_{false};
  std::optional<ir::MemoryReport> memory_;
  bool disk_hit_ = false;
  std::string object_file_;
};

/// The lowering options of a compiled step (opt level 1 or 2) under `o`, its backend's rules
/// included.
passes::LowerOptions lower_options(const CompileOptions& o);
/// The compile environment mixed into cache keys: the lowering options `o` makes (the backend's
/// name among them).
uint64_t environment_key(const CompileOptions& o);

}  // namespace lt::lazy
