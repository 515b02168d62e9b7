// rt::gemm: picks the path by dtype and CPU (gemm_paths.h), and the BLAS path, which splits one
// f32 or f64 GEMM over the thread pool and runs each block with the backend.
// OpenBLAS (Debian's pthread build, pinned to one thread per call: our pool owns the cores, and
// that build is the one whose internal buffers are locked, so concurrent calls are safe) is
// faster than Eigen's blocked kernel at the shapes of the MLP's and the CNN's steps; Eigen
// stays as the backend of builds without it (-DLT_BLAS=eigen).
#include "runtime/kernels/gemm.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/gemm_paths.h"
#include "runtime/kernels/gemm_split.h"
#include "runtime/kernels/onednn_matmul.h"

#ifdef LT_GEMM_OPENBLAS
#include <cblas.h>
#else
#include <Eigen/Core>
#endif

namespace lt::rt {
namespace {

#ifdef LT_GEMM_OPENBLAS

struct OpenBlasSingleThreaded {
  OpenBlasSingleThreaded() { openblas_set_num_threads(1); }
};

CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

template <class T>
void backend_block(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                   int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  static const OpenBlasSingleThreaded once;
  // BLAS wants every leading dimension >= 1 and >= the stored row length, even when a
  // dimension it multiplies by is 1 (our callers may pass the tight 0 or 1 then).
  const int64_t min_lda = std::max<int64_t>(1, ta ? m : k),
                min_ldb = std::max<int64_t>(1, tb ? k : n);
  lda = std::max(lda, min_lda);
  ldb = std::max(ldb, min_ldb);
  ldc = std::max<int64_t>(ldc, std::max<int64_t>(1, n));
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
  else
    cblas_dgemm(CblasRowMajor, trans(ta), trans(tb), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
}

#else

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using ConstMap = Eigen::Map<const RowMat<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
template <class T>
using MutMap = Eigen::Map<RowMat<T>, Eigen::Unaligned, Eigen::OuterStride<>>;

template <class T, class A, class B>
void product_into(MutMap<T> c, const A& a, const B& b, T alpha, T beta) {
  if (beta == T(0)) {
    c.noalias() = alpha * a * b;
    return;
  }
  if (beta != T(1)) c *= beta;
  c.noalias() += alpha * a * b;
}

// Transposes fold into the Eigen expressions, so no operand is copied.
template <class T>
void backend_block(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                   int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  MutMap<T> cm(c, m, n, Eigen::OuterStride<>(ldc));
  const ConstMap<T> am(a, ta ? k : m, ta ? m : k, Eigen::OuterStride<>(lda));
  const ConstMap<T> bm(b, tb ? n : k, tb ? k : n, Eigen::OuterStride<>(ldb));
  if (!ta && !tb) product_into<T>(cm, am, bm, alpha, beta);
  else if (!ta) product_into<T>(cm, am, bm.transpose(), alpha, beta);
  else if (!tb) product_into<T>(cm, am.transpose(), bm, alpha, beta);
  else product_into<T>(cm, am.transpose(), bm.transpose(), alpha, beta);
}

#endif

// One block of a GEMM (gemm_block_args), on the calling thread.
template <class T>
void gemm_block(const GemmArgs& g) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const T alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
  if (g.k == 0) {  // an empty sum: C = beta * C (beta 0 never reads C, which may hold NaN)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j)
        c[i * g.ldc + j] = beta == T(0) ? T(0) : beta * c[i * g.ldc + j];
    return;
  }
  backend_block<T>(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, a, g.lda, b, g.ldb, beta, c, g.ldc);
}

template <class T>
void gemm_typed(const GemmArgs& g) {
  for_each_gemm_block(g, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    gemm_block<T>(gemm_block_args(g, m0, m1, n0, n1));
  });
}

// Integers (PyTorch's CPU matmul of i64 and i32): C = A B, wrapping as the elementwise ops do,
// row by row over B's contiguous rows. Not a fast path: integer matmul is for indices and masks.
template <class T>
void gemm_int_block(const GemmArgs& g) {
  using U = std::make_unsigned_t<T>;
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  std::vector<U> row(static_cast<size_t>(g.n));
  for (int64_t i = 0; i < g.m; ++i) {
    std::fill(row.begin(), row.end(), U(0));
    for (int64_t p = 0; p < g.k; ++p) {
      const U aip = static_cast<U>(g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p]);
      for (int64_t j = 0; j < g.n; ++j)
        row[j] += aip * static_cast<U>(g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j]);
    }
    for (int64_t j = 0; j < g.n; ++j) {
      T& out = c[i * g.ldc + j];
      out = static_cast<T>(g.beta == 0 ? row[j] : static_cast<U>(static_cast<U>(out) + row[j]));
    }
  }
}

void gemm_int(const GemmArgs& g) {
  LT_CHECK(g.alpha == 1 && (g.beta == 0 || g.beta == 1),
           "gemm: integer operands take alpha 1 and beta 0 or 1, got {} and {}", g.alpha, g.beta);
  for_each_gemm_block(g, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const GemmArgs block = gemm_block_args(g, m0, m1, n0, n1);
    if (g.dtype == DType::I64) gemm_int_block<int64_t>(block);
    else gemm_int_block<int32_t>(block);
  });
}

void check_dtypes(const GemmArgs& g) {
  const DType a = g.a_type(), b = g.b_type(), c = g.c_type();
  const bool low = a == DType::BF16 || a == DType::F16;
  const bool ints = a == DType::I64 || a == DType::I32;
  const bool same = a == b && b == c && (a == DType::F32 || a == DType::F64 || low || ints);
  if (same || (low && a == b && c == DType::F32)) return;
  throw Error(fmt::format("gemm: A {} x B {} -> C {} is not supported: A and B must both be f32, "
                          "f64, bf16, f16, i64 or i32, and C of their dtype (or f32 for bf16 and "
                          "f16 inputs)",
                          dtype_name(a), dtype_name(b), dtype_name(c)));
}

// f32 goes to oneDNN where it has AVX-512 kernels: they beat OpenBLAS at every step shape of
// the trainers.
bool f32_on_onednn() { return onednn::has_avx512(); }

}  // namespace

const char* gemm_backend() {
  if (f32_on_onednn()) return "onednn";
#ifdef LT_GEMM_OPENBLAS
  return "openblas";
#else
  return "eigen";
#endif
}

const char* gemm_bf16_backend() {
  const char* isa = onednn::bf16_isa();
  if (!isa) return "f32-fallback";
  return std::string_view(isa) == "amx" ? "onednn-amx" : "onednn-avx512_core_bf16";
}

void gemm_blas(const GemmArgs& g) {
#ifdef LT_GEMM_OPENBLAS
  // Debian's OpenBLAS takes 32-bit sizes.
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  LT_CHECK(std::max({g.m, g.n, g.k, g.lda, g.ldb, g.ldc}) <= kMax,
           "gemm: a size over 2^31-1 (m={}, n={}, k={}) needs a 64-bit BLAS", g.m, g.n, g.k);
#endif
  if (g.dtype == DType::F64) gemm_typed<double>(g);
  else gemm_typed<float>(g);
}

void gemm_batch(const GemmArgs& g, int64_t batch, int64_t stride_a, int64_t stride_b,
                int64_t stride_c) {
  check_dtypes(g);
  LT_CHECK(stride_a > 0 && stride_b > 0 && stride_c > 0, "gemm_batch: strides {}, {}, {}",
           stride_a, stride_b, stride_c);
  if (g.m <= 0 || g.n <= 0 || batch <= 0) return;
  const bool on_onednn = g.a_type() == DType::BF16 ? onednn::bf16_isa() != nullptr
                                                   : g.a_type() == DType::F32 && f32_on_onednn();
  if (on_onednn && g.k > 0)
    return onednn::matmul_batch(g, batch, stride_a, stride_b, stride_c);
  for (int64_t i = 0; i < batch; ++i) {
    GemmArgs gi = g;
    gi.a = static_cast<const char*>(g.a) + i * stride_a * dtype_size(g.a_type());
    gi.b = static_cast<const char*>(g.b) + i * stride_b * dtype_size(g.b_type());
    gi.c = static_cast<char*>(g.c) + i * stride_c * dtype_size(g.c_type());
    gi.parallel = false;
    gemm(gi);
  }
}

void gemm(const GemmArgs& g) {
  check_dtypes(g);
  if (g.m <= 0 || g.n <= 0) return;
  if (g.dtype == DType::I64 || g.dtype == DType::I32) return gemm_int(g);
  if (g.a_type() == DType::BF16)
    return onednn::bf16_isa() ? gemm_onednn(g) : gemm_low_via_f32(g);
  // f16 arithmetic is AVX512-FP16 (Sapphire Rapids on), which oneDNN 2.6 does not use for matmul:
  // f16 is for scripts ported from GPUs, bf16 the fast path.
  if (g.a_type() == DType::F16) return gemm_low_via_f32(g);
  if (g.dtype == DType::F32 && f32_on_onednn()) return gemm_onednn(g);
  gemm_blas(g);
}

}  // namespace lt::rt
