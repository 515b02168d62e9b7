// PyTorch's type promotion, at the user level only: the op functions (through apply1_promoted)
// cast an op's operands to their common dtype (torch.result_type) before the op's node is built,
// so the IR keeps its rule of one dtype per op. What promotes follows from the rows: every binary
// elementwise row, the branches of where, the pieces of a concat, sums of integers; div divides
// integers in kDefaultFloat (true division), mean refuses them; the float-only unary rows read
// integers as kDefaultFloat; f16 and bf16 compute in f32 on every elementwise row.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "ir/op.h"
#include "lt/scalar.h"
#include "lt/tensor.h"

namespace lt {

/// How `op` runs on mixed operands: on `inputs`, cast to the dtype it computes in, with its
/// results then cast to `round_to` where the common dtype is one the kernels only store (bf16,
/// f16: computed in f32, exactly as PyTorch's CPU kernels) or bool on an arithmetic row
/// (computed in i64).
struct Promoted {
  std::vector<Tensor> inputs;
  std::optional<DType> round_to;
};

/// Nullopt when `op` takes `inputs` as they are; throws PyTorch's error where PyTorch refuses
/// the dtypes (sub of bool, mean of an integer tensor).
std::optional<Promoted> promote(ir::Op op, std::span<const Tensor> inputs, const Loc& loc);

/// A C++ number as an operand next to `other`: a 0-d tensor of the dtype the two promote to
/// (bool numbers stay bool, which promotes the same and lets sub refuse them as PyTorch does).
Tensor wrap_number(Scalar s, const Tensor& other, const Loc& loc);

}  // namespace lt
