// Mixed precision for a scope, as PyTorch's torch.autocast("cpu", dtype=torch.bfloat16) (or
// float16): inside an AutocastGuard, ops on the lower-precision list (the table in
// frontend/amp/autocast_table.cpp: matmul and conv2d) run on bf16 (or f16) copies of their f32
// operands (the GEMM accumulates in f32) and give their result back as f32; every other op runs
// in f32 as without the guard. Parameters stay f32 (master weights), cast on use. The casts are
// ops like any other: in lazy mode they are graph nodes that fuse into the loops around them, and
// their gradients are casts back. docs/AMP.md.
#pragma once
#include <source_location>

#include "ir/dtype.h"

namespace lt {

/// Autocast on (to `dtype`) or off for the scope, restoring the previous state at its end.
/// `dtype` is bf16 (the fast path: oneDNN's bf16 GEMM on CPUs with bf16 instructions) or f16
/// (for scripts ported from GPUs, with loss scaling: lt/amp.h; computed in f32 on the CPU); any
/// other throws lt::InputError.
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
