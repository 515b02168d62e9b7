// Buffer planning: liveness over the launches of a fusion plan, one arena for intermediates with
// space reused once a value is dead, and donated parameter buffers for results (ir/buffer_plan.h).
#pragma once
#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"

namespace lt::passes {

struct BufferPlanOptions {
  bool donate = true;  // false: every result gets a fresh buffer
  /// Lets a Loop kernel write a result over a donated parameter it reads itself, element by
  /// element (ir::can_write_in_place): the usual optimizer update `w - lr * v`, fused into the
  /// kernel that reads `w`. false: a donated parameter must be dead before the writing launch.
  // Codegen drops noalias on such kernels, so LLVM keeps each element's load before its store.
  bool in_place_loops = true;
  /// A library reshape of an intermediate takes that intermediate's bytes (ir::BufferSlot::alias)
  /// instead of copying it. false: every reshape launch copies.
  bool alias_reshapes = true;
  /// A collective whose operand is an intermediate read by no later launch reduces in the
  /// operand's bytes (ir::BufferSlot::alias) instead of a copy of them; where its output is a
  /// result, the operand is written into the result's buffer (ir::Storage::InResult).
  bool alias_collectives = true;
};

/// Plans where every value a launch writes lives (launches as ir::launch_sequence counts them
/// under `rules`, the backend's that made `fusion`):
/// - intermediates (values no result names) get 64-byte-aligned ranges of one arena. A value is
///   live from the launch that writes it to the last launch that reads it, and values live at a
///   common launch never share a byte, so no launch writes over its own inputs. Offsets are
///   assigned greedily by size, largest first, each in the best-fitting gap among the values it
///   is live with. A library reshape of an intermediate that is not a result aliases it: same
///   bytes, and the intermediate stays live while the reshape's output is read. So does the
///   output of a collective whose operand is an intermediate that no later launch reads, or,
///   where that output is a result, the operand lives in the result's buffer;
/// - a result named by a donation (parameter p -> result r) takes over p's buffer when p is not a
///   result itself and no launch after the one writing r reads p, nor that launch, unless it is
///   an in-place Loop kernel (options); any other result gets a fresh buffer. A result that is a
///   parameter, or appears twice, shares that slot.
/// The plan passes ir::verify_buffer_plan. O(n^2) in the number of intermediates at worst.
ir::BufferPlan plan_buffers(const ir::Graph& g, const ir::FusionPlan& fusion,
                            const ir::KernelRules& rules, const BufferPlanOptions& options = {});

}  // namespace lt::passes
