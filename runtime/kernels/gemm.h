// The one GEMM entry point of the eager kernels: matmul and convolution both call it, so the
// backends (oneDNN for bf16, and for f32 on AVX-512 CPUs; OpenBLAS, or Eigen where it is built
// without, for the rest: gemm.cpp says why) live in one place. Row-major, BLAS-like arguments.
#pragma once
#include <cstdint>
#include <optional>

#include "ir/dtype.h"

namespace lt::rt {

/// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C, all row-major. op(A) is A (stored [m,k],
/// row stride lda) or, with trans_a, A^T (A stored [k,m]); likewise B. beta == 0 never reads C.
/// The operands share `dtype` unless a_dtype, b_dtype or c_dtype name their own. Supported:
/// f32 x f32 -> f32, f64 x f64 -> f64, bf16 x bf16 -> bf16 or f32, and f16 x f16 -> f16 or f32
/// (bf16 and f16 accumulated in f32; alpha and beta applied in f32); anything else throws
/// lt::Error.
struct GemmArgs {
  DType dtype = DType::F32;
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0;
  const void* b = nullptr;
  int64_t ldb = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  double alpha = 1, beta = 0;
  bool parallel = true;  // false when the caller already runs one GEMM per thread
  std::optional<DType> a_dtype = std::nullopt, b_dtype = std::nullopt, c_dtype = std::nullopt;

  DType a_type() const { return a_dtype.value_or(dtype); }
  DType b_type() const { return b_dtype.value_or(dtype); }
  DType c_type() const { return c_dtype.value_or(dtype); }
};

/// Work per thread below which splitting a GEMM costs more than it saves (a pool wake-up is a
/// fair part of what 2 MFLOP take one core).
inline constexpr double kGemmMinFlopsPerPart = 2e6;

/// The f32 GEMM backend this CPU gets, chosen at run time: "onednn" (AVX-512 CPUs), or the
/// build's BLAS, "openblas" or "eigen", which also runs every f64 GEMM.
const char* gemm_backend();

/// The bf16 GEMM this CPU gets, chosen at run time: "onednn-amx", "onednn-avx512_core_bf16", or
/// "f32-fallback" (inputs widened to f32 for the f32 GEMM) on a CPU without bf16 instructions.
const char* gemm_bf16_backend();

/// Runs one GEMM, split over the thread pool when it is large enough (inline when called from
/// inside a parallel_for).
void gemm(const GemmArgs& g);

/// `batch` GEMMs of g's shape on the calling thread: matrix i of A starts stride_a elements after
/// matrix i - 1, likewise B with stride_b and C with stride_c (all > 0). oneDNN runs them as one
/// batched primitive where it would run g, which saves its fixed cost per call on small matrices
/// (attention's), with the bits each GEMM alone gives; other backends run one GEMM at a time.
void gemm_batch(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                int64_t stride_c);

}  // namespace lt::rt
