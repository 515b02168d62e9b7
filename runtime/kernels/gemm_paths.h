// The paths behind rt::gemm (gemm.h), each callable on its own: gemm() picks one by dtype and CPU,
// and tests and benchmarks call them directly to compare them. Kernel-internal. Each takes
// dtypes that gemm() has checked, and m, n > 0.
#pragma once
#include "runtime/kernels/gemm.h"

namespace lt::rt {

/// The build's BLAS (OpenBLAS, or Eigen): f32 or f64.
void gemm_blas(const GemmArgs& g);

/// oneDNN's matmul: f32, or bf16 on a CPU with bf16 instructions (onednn::bf16_isa).
void gemm_onednn(const GemmArgs& g);

/// bf16 or f16 through the f32 GEMM: A and B widened to f32 (exactly), C rounded to nearest even
/// when it is not f32. The path of CPUs without bf16 instructions, and of every f16 GEMM.
void gemm_low_via_f32(const GemmArgs& g);

}  // namespace lt::rt
