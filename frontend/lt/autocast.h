// Mixed precision for a scope, as PyTorch's torch.autocast("cpu", dtype=torch.bfloat16): inside
// an AutocastGuard, ops on the lower-precision list (the table in frontend/amp/autocast_table.cpp)
// run on bf16 copies of their f32 operands (the GEMM accumulates in f32) and give their result
// back as f32; every other op runs in f32 as without the guard. Parameters stay f32 (master
// weights), cast on use. The casts are ops like any other: in lazy mode they are graph nodes
// that fuse into the loops around them, and their gradients are casts back. docs/TRAINING.md,
// "Mixed precision".
#pragma once
#include <source_location>

#include "ir/dtype.h"

namespace lt {

/// Autocast on (to `dtype`) or off for the scope, restoring the previous state at its end.
/// bf16 only: f16 throws lt::InputError (it needs f16 GEMM kernels, not there yet).
class AutocastGuard {
 public:
  explicit AutocastGuard(DType dtype = DType::BF16, bool enabled = true,
                         std::source_location loc = std::source_location::current());
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool prev_enabled_;
  DType prev_dtype_;
};

/// Whether autocast is on in this thread, and its dtype.
bool autocast_enabled();
DType autocast_dtype();

}  // namespace lt
