// Hashes of the plans a compiled step is made from: with the graph's structural hash, the
// codegen version and the CPU they key the on-disk object cache, so a changed fusion or memory
// plan never loads code built for another.
#pragma once
#include <cstdint>

#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"

namespace lt::ir {

uint64_t plan_hash(const FusionPlan& plan);
uint64_t plan_hash(const BufferPlan& plan);

}  // namespace lt::ir
