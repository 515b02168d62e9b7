// The dispatcher's side of autocast (lt/autocast.h).
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "lt/tensor.h"

namespace lt::amp {

/// How an op runs under autocast.
enum class AutocastPolicy {
  LowerPrecision,  ///< on the autocast dtype, result cast back to f32
  F32,             ///< in f32 (reductions, softmax, losses, norms, exp/log, the optimizer, ...)
};

/// The policy of `op` under autocast: its row of the table (autocast_table.cpp), F32 without one.
AutocastPolicy autocast_policy(ir::Op op);

/// `op` on `inputs` as autocast runs it, when autocast is on, `op` is on the lower-precision
/// list and some operand is f32: those operands cast to the autocast dtype, the op run on them,
/// its float results cast back to f32. Nullopt otherwise (the caller runs the op as it is).
std::optional<std::vector<Tensor>> autocast_apply(ir::Op op, std::span<const Tensor> inputs,
                                                  const ir::Attrs& attrs, const Loc& loc);

}  // namespace lt::amp
