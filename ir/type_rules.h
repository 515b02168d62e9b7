// Shape and dtype inference: one rule per op, shared by eager mode, lazy tracing and the verifier.
#pragma once
#include <span>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "ir/type_list.h"

namespace lt::ir {

/// Output types of `op` applied to inputs of types `in`. Throws lt::TypeError with a one-line
/// reason (no op name or location: the caller adds them) when the inputs or attributes are invalid.
TypeList infer_types(Op op, std::span<const TensorType> in, const Attrs& attrs);

// Per-family rules, called by infer_types after the arity and attribute-kind checks.
TypeList infer_elementwise(ElementwiseOp op, std::span<const TensorType> in, const Attrs& attrs);
TypeList infer_reduce(ReduceOp op, std::span<const TensorType> in, const ReduceAttrs& attrs);
TypeList infer_view(ViewOp op, std::span<const TensorType> in, const Attrs& attrs);
TypeList infer_library(LibraryOp op, std::span<const TensorType> in, const Attrs& attrs);
TypeList infer_nn(NnOp op, std::span<const TensorType> in, const Attrs& attrs);
/// Gather, scatter and scatter_add (ir/type_rules_gather.cpp), for infer_nn.
TypeList infer_gather(NnOp op, std::span<const TensorType> in, int64_t axis);
TypeList infer_creation(CreationOp op, std::span<const TensorType> in, const Attrs& attrs);

TypeList infer_collective(CollectiveOp op, std::span<const TensorType> in, const Attrs& attrs);

/// Shorthand for rules: throws TypeError(fmt::format(...)).
[[noreturn]] void type_fail(std::string msg);

/// Shape arithmetic on attribute values, which may be anything: a result past int64 is
/// INT64_MAX (INT64_MIN below), larger than any valid size, so the check that follows (or
/// infer_types' own check of every result shape) rejects it.
int64_t saturating_add(int64_t a, int64_t b);
int64_t saturating_mul(int64_t a, int64_t b);

}  // namespace lt::ir
