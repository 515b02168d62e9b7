// The bf16 GEMM behind rt::gemm (gemm.h): oneDNN where the CPU has bf16 instructions, the f32 GEMM
// on widened copies elsewhere. Kernel-internal; tests call the fallback directly.
#pragma once
#include "runtime/kernels/gemm.h"

namespace lt::rt {

/// gemm() for bf16 A and B (C bf16 or f32), m and n > 0; dtypes already checked.
void gemm_bf16(const GemmArgs& g);

/// The same through the f32 GEMM: A and B widened to f32 (exactly), C rounded to nearest even
/// when it is bf16. The path of CPUs without bf16 instructions.
void gemm_bf16_via_f32(const GemmArgs& g);

}  // namespace lt::rt
