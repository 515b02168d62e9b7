// The one path every op takes: check types with the op's rule (errors name op, operands and the
// caller's line), run the eager kernel, and record autograd history.
#pragma once
#include <span>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "lt/tensor.h"

namespace lt {

std::vector<Tensor> apply(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs,
                          const Loc& loc);
/// apply for an op with one result.
Tensor apply1(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs, const Loc& loc);

/// apply1 for the user's op functions of the rows that promote: the operands first cast as
/// PyTorch promotes them (frontend/promotion.h). apply itself runs the row on the operands given.
Tensor apply1_promoted(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs,
                       const Loc& loc);

/// The error text every op failure uses: "<op>: <reason> (operands: f32[2,3], i64[2]) at f.cpp:12".
[[noreturn]] void fail_op(std::string_view op, std::string_view reason,
                          std::span<const Tensor> operands, const Loc& loc);

}  // namespace lt
