// Lazy tracing and materialization (frontend-internal; users see lt/lazy.h).
#pragma once
#include <span>
#include <string_view>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/type_list.h"
#include "lt/tensor.h"

namespace lt::lazy {

/// Whether an op on these inputs is traced: lazy mode is on. (Eager mode refuses pending inputs.)
bool tracing();
/// Runs this thread's ops eagerly whatever the mode: the data loader's workers, while the thread
/// that steps traces (the trace is that thread's).
void set_eager_thread(bool on);
/// Records a node; fills `outs` (one per type) with pending tensors of the given (already
/// inferred) types.
void trace_into(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                TypeList types, const Loc& loc, std::span<Tensor> outs);
/// Registers a tensor that holds a pending value (so mark_step finds it while it lives).
void track(const std::shared_ptr<TensorImpl>& impl);
/// Runs the pending subgraph of one tensor (a value read); counted with reason and location.
void sync(const Tensor& t, std::string_view reason, const Loc& loc);
/// Runs the pending subgraphs of several tensors as one graph (one value read, counted once);
/// undefined and already materialized tensors are skipped.
void sync(std::span<const Tensor> ts, std::string_view reason, const Loc& loc);

}  // namespace lt::lazy
