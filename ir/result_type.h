// torch.result_type: the dtype an op computes in when its operands' dtypes differ. Operands of
// rank >= 1 decide within a category; a 0-d tensor, then a C++ number, takes part only where it
// is of a higher category (bool < integer < float), so x_bf16 * 2.5 stays bf16.
#pragma once
#include <span>

#include "ir/dtype.h"

namespace lt {

/// An operand's part in the promotion, PyTorch's three priorities.
enum class PromotionRank : uint8_t {
  Dim,     ///< a tensor of rank >= 1
  ZeroDim, ///< a 0-d tensor
  Number,  ///< a C++ number: dtype bool, i64 (any integer) or f64 (any floating point)
};

struct PromotionOperand {
  DType dtype;
  PromotionRank rank;
};

/// The common dtype; a floating-point number counts as kDefaultFloat. Needs one operand.
DType result_type(std::span<const PromotionOperand> operands);

}  // namespace lt
