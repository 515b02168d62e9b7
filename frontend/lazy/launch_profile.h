// LT_PROFILE=1: wall time of every launch of every compiled step, summed per graph, for finding
// where a step's time goes (which fused kernel, which library call) without an external profiler.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "runtime/executable.h"

namespace lt::lazy {

/// One compiled graph's launches and their summed times. Runs of one step are serialized by the
/// tracer (mark_step holds the registry), so no lock is taken per run.
class LaunchProfile {
 public:
  /// Labels each launch: loop kernels by their group's shape and ops, library calls by op and
  /// output type.
  LaunchProfile(std::string graph, const ir::Graph& g, const ir::FusionPlan& plan,
                const rt::Executable& exe);
  /// The per-launch accumulators for one more run.
  std::span<int64_t> begin_run() {
    ++runs_;
    return ns_;
  }
  /// Launches slowest first, with their share of the graph's time.
  std::string report() const;

 private:
  std::string graph_;
  std::vector<std::string> labels_;
  std::vector<bool> collective_;  // per launch: a collective (all_reduce)
  std::vector<int64_t> ns_;
  int64_t runs_ = 0;
};

/// Whether launches are being timed: the setting LT_PROFILE.
bool profiling();
/// Keeps `p` for profile_report() (the graph cache may evict the step that owns it).
void register_profile(std::shared_ptr<LaunchProfile> p);

}  // namespace lt::lazy
