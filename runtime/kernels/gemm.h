// The one GEMM entry point of the eager kernels: matmul and convolution both call it, so the
// backend (OpenBLAS, or Eigen where it is built without; see gemm.cpp) lives in one place.
// Row-major, BLAS-like arguments.
#pragma once
#include <cstdint>

#include "ir/dtype.h"

namespace lt::rt {

/// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C, all row-major. op(A) is A (stored [m,k],
/// row stride lda) or, with trans_a, A^T (A stored [k,m]); likewise B. beta == 0 never reads C.
struct GemmArgs {
  DType dtype = DType::F32;  // F32 or F64
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
};

/// Work per thread below which splitting a GEMM costs more than it saves (a pool wake-up is a few
/// microseconds; 2 MFLOP is ~20 us on one core).
inline constexpr double kGemmMinFlopsPerPart = 2e6;

/// The GEMM backend this build uses: "openblas" or "eigen".
const char* gemm_backend();

/// Runs one GEMM, split over the thread pool when it is large enough (inline when called from
/// inside a parallel_for).
void gemm(const GemmArgs& g);

}  // namespace lt::rt
