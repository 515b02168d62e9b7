// oneDNN's matmul primitive for one GEMM block on the calling thread (oneDNN's headers stay in
// the .cpp).
#pragma once
#include "runtime/kernels/gemm.h"

namespace lt::rt::onednn {

/// The instruction set oneDNN runs bf16 matmuls with on this CPU: "amx", "avx512_core_bf16", or
/// nullptr when it has no bf16 instructions (oneDNN would emulate them, slower than f32).
const char* bf16_isa();

/// Whether oneDNN runs f32 matmuls with its AVX-512 kernels on this CPU.
bool has_avx512();

/// C = alpha * op(A) op(B) + beta * C for f32, or for bf16 A and B (C bf16 or f32), k > 0, on the
/// calling thread only. A primitive is created once per shape, strides, transposes, dtypes, alpha
/// and beta.
void matmul(const GemmArgs& g);
/// `batch` such GEMMs as one primitive, on the calling thread (rt::gemm_batch's strides).
void matmul_batch(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                  int64_t stride_c);

}  // namespace lt::rt::onednn
