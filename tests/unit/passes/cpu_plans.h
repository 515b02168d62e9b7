// The fusion and buffer-planning tests check the plans of the CPU backend: its kernel rules and
// its kernel stages (backends/cpu/).
#pragma once
#include "backends/cpu/cpu_backend.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/kernel_rules.h"
#include "passes/fuse.h"

namespace lt::passes::testing {

inline const ir::KernelRules& cpu_rules() { return backends::cpu().rules(); }

/// The plan the CPU backend's kernel stages make of g.
inline ir::FusionPlan fusion_plan(const ir::Graph& g, const FuseOptions& o = {}) {
  return backends::cpu().fusion_plan(g, o);
}

}  // namespace lt::passes::testing
