// What the lowering works on and hands to codegen: the optimized graph and, once the fuse and
// buffer_plan stages have run on it, its fusion plan and buffer plan.
#pragma once
#include <optional>

#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "passes/lower_options.h"

namespace lt::passes {

struct LoweredGraph {
  ir::Graph graph;
  std::optional<ir::FusionPlan> fusion;   ///< set by the fuse stage
  std::optional<ir::BufferPlan> buffers;  ///< set by the buffer_plan stage (after fuse)
};

}  // namespace lt::passes
