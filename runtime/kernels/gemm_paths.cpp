// rt::gemm through oneDNN (one primitive per block of the pool's split), and bf16 or f16 through
// the f32 GEMM on widened copies for CPUs without instructions for them: that gives the same
// products (a product of two bf16 or two f16 values is exact in f32) and f32 accumulation.
#include "runtime/kernels/gemm_paths.h"

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "runtime/kernels/gemm_split.h"
#include "runtime/kernels/onednn_matmul.h"

namespace lt::rt {
namespace {

using Bf16 = Eigen::bfloat16;
using Half = Eigen::half;

/// A [rows, cols] matrix of T (bf16 or f16) with row stride ld, widened to a dense f32 copy.
template <class T>
std::vector<float> widen(const void* p, int64_t rows, int64_t cols, int64_t ld) {
  const T* src = static_cast<const T*>(p);
  std::vector<float> out(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[i * cols + j] = static_cast<float>(src[i * ld + j]);
  return out;
}

/// gemm_low_via_f32 with both operands of storage type T.
template <class T>
void gemm_via_f32(const GemmArgs& g) {
  const int64_t a_rows = g.trans_a ? g.k : g.m, a_cols = g.trans_a ? g.m : g.k;
  const int64_t b_rows = g.trans_b ? g.n : g.k, b_cols = g.trans_b ? g.k : g.n;
  const std::vector<float> a = widen<T>(g.a, a_rows, a_cols, g.lda);
  const std::vector<float> b = widen<T>(g.b, b_rows, b_cols, g.ldb);
  GemmArgs f = g;
  f.dtype = DType::F32;
  f.a_dtype = f.b_dtype = f.c_dtype = std::nullopt;
  f.a = a.data();
  f.lda = a_cols;
  f.b = b.data();
  f.ldb = b_cols;
  if (g.c_type() == DType::F32) return gemm(f);
  // A narrow C: computed in f32 scratch (holding C's old values when beta reads them), then
  // rounded to nearest even.
  std::vector<float> c = g.beta == 0 ? std::vector<float>(g.m * g.n)
                                     : widen<T>(g.c, g.m, g.n, g.ldc);
  f.c = c.data();
  f.ldc = g.n;
  gemm(f);
  T* out = static_cast<T*>(g.c);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) out[i * g.ldc + j] = static_cast<T>(c[i * g.n + j]);
}

/// C = beta * C for an empty sum (k == 0); beta 0 never reads C, which may hold NaN.
template <class T>
void scale_c(const GemmArgs& g) {
  T* c = static_cast<T*>(g.c);
  const float beta = static_cast<float>(g.beta);
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      T& x = c[i * g.ldc + j];
      x = static_cast<T>(beta == 0 ? 0.0f : beta * static_cast<float>(x));
    }
}

}  // namespace

void gemm_onednn(const GemmArgs& g) {
  if (g.k == 0) return g.c_type() == DType::F32 ? scale_c<float>(g) : scale_c<Bf16>(g);
  for_each_gemm_block(g, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    onednn::matmul(gemm_block_args(g, m0, m1, n0, n1));
  });
}

void gemm_low_via_f32(const GemmArgs& g) {
  if (g.a_type() == DType::F16) gemm_via_f32<Half>(g);
  else gemm_via_f32<Bf16>(g);
}

}  // namespace lt::rt
