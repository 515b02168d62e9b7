// Dim arguments as PyTorch takes them: negative dims count from the end, and a bad one is
// PyTorch's "Dimension out of range" error.
#pragma once
#include <fmt/format.h>

#include <span>
#include <string_view>

#include "frontend/dispatch.h"

namespace lt {

/// dim in [-rank, rank) as a dim in [0, rank); a 0-d tensor takes 0 and -1, as in PyTorch.
inline int64_t wrap_dim(int64_t dim, int64_t rank, std::string_view op,
                        std::span<const Tensor> operands, const Loc& loc) {
  const int64_t r = rank > 0 ? rank : 1;
  if (dim < -r || dim >= r)
    fail_op(op,
            fmt::format("Dimension out of range (expected to be in range of [{}, {}], but got {})",
                        -r, r - 1, dim),
            operands, loc);
  return dim < 0 ? dim + r : dim;
}

/// The operands are defined tensors, or op fails naming the operands.
inline void need_defined(std::span<const Tensor> operands, std::string_view op, const Loc& loc) {
  for (const Tensor& t : operands)
    if (!t.defined()) fail_op(op, "operand is an undefined tensor", operands, loc);
}

}  // namespace lt
