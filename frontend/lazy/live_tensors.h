// Every tensor that holds a pending value, so mark_step() finds them all, and the count of ops
// traced since the last materialization.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "frontend/tensor_impl.h"
#include "ir/op.h"
#include "lt/tensor.h"

namespace lt::lazy {

/// Counts one traced op (the hot path: an atomic, flushed into metrics at materialization) and
/// warns once when LT_MAX_PENDING_NODES ops pile up without a mark_step.
void count_traced(ir::Op op, const Loc& loc);
/// Ops traced since the last call (for the nodes_traced metric).
int64_t take_traced_count();
/// A graph ran: the pending-op count starts again.
void reset_pending_count();

/// Takes every live pending tensor (each once) off the list, for mark_step.
std::vector<std::shared_ptr<TensorImpl>> take_pending_tensors();

}  // namespace lt::lazy
