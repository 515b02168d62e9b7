// GEMM (Eigen's blocked kernel behind one entry point), batched matmul, and the library family's
// dispatch. Transposes are folded into the Eigen expressions, so no operand is ever copied.
#include <Eigen/Core>

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

// Work per thread below which splitting a GEMM costs more than it saves (a pool wake-up is a few
// microseconds; 2 MFLOP is ~30 us of Eigen on one core).
constexpr double kMinFlopsPerPart = 2e6;
// Split blocks stay multiples of this, so each part keeps Eigen's register tiles full.
constexpr int64_t kSplitAlign = 16;

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

// The block C[m0:m1, n0:n1] of one GEMM, on the calling thread.
template <class T>
void gemm_block(const GemmArgs& g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  const int64_t m = m1 - m0, n = n1 - n0, k = g.k;
  MutMap<T> c(static_cast<T*>(g.c) + m0 * g.ldc + n0, m, n, Eigen::OuterStride<>(g.ldc));
  const T alpha = static_cast<T>(g.alpha), beta = static_cast<T>(g.beta);
  if (k == 0) {  // an empty sum: C = beta * C
    if (beta == T(0)) c.setZero();
    else c *= beta;
    return;
  }
  // A is stored [m, k] or, transposed, [k, m]; B is stored [k, n] or [n, k].
  const ConstMap<T> am(g.trans_a ? a + m0 : a + m0 * g.lda, g.trans_a ? k : m, g.trans_a ? m : k,
                       Eigen::OuterStride<>(g.lda));
  const ConstMap<T> bm(g.trans_b ? b + n0 * g.ldb : b + n0, g.trans_b ? n : k, g.trans_b ? k : n,
                       Eigen::OuterStride<>(g.ldb));
  if (!g.trans_a && !g.trans_b) product_into<T>(c, am, bm, alpha, beta);
  else if (!g.trans_a) product_into<T>(c, am, bm.transpose(), alpha, beta);
  else if (!g.trans_b) product_into<T>(c, am.transpose(), bm, alpha, beta);
  else product_into<T>(c, am.transpose(), bm.transpose(), alpha, beta);
}

template <class T>
void gemm_typed(const GemmArgs& g) {
  const double flops = 2.0 * g.m * g.n * g.k;
  const int64_t parts = g.parallel ? std::min<int64_t>(num_threads(), flops / kMinFlopsPerPart) : 1;
  if (parts <= 1) return gemm_block<T>(g, 0, g.m, 0, g.n);
  // Split the longer side; a split of M repacks B in every part, a split of N repacks A.
  const bool split_m = g.m >= g.n || g.m >= parts * 4 * kSplitAlign;
  const int64_t len = split_m ? g.m : g.n;
  int64_t step = (len + parts - 1) / parts;
  step = std::min(len, (step + kSplitAlign - 1) / kSplitAlign * kSplitAlign);
  const int64_t chunks = (len + step - 1) / step;
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t lo = i * step, hi = std::min(len, lo + step);
      if (split_m) gemm_block<T>(g, lo, hi, 0, g.n);
      else gemm_block<T>(g, 0, g.m, lo, hi);
    }
  });
}

/// Element offsets of each output batch matrix into an operand with batch dims `s` (right-aligned
/// against the output's batch dims `out`; size-1 and missing dims broadcast).
std::vector<int64_t> batch_offsets(const Shape& s, const Shape& out, int64_t matrix) {
  const size_t ob = out.size() - 2, sb = s.size() - 2;
  std::vector<int64_t> stride(ob, 0);
  int64_t acc = matrix;
  for (size_t d = sb; d-- > 0;) {
    stride[ob - sb + d] = s[d] == 1 ? 0 : acc;
    acc *= s[d];
  }
  int64_t batch = 1;
  for (size_t d = 0; d < ob; ++d) batch *= out[d];
  std::vector<int64_t> off(batch);
  for (int64_t i = 0; i < batch; ++i) {
    int64_t rem = i, o = 0;
    for (size_t d = ob; d-- > 0;) {
      o += (rem % out[d]) * stride[d];
      rem /= out[d];
    }
    off[i] = o;
  }
  return off;
}

}  // namespace

void gemm(const GemmArgs& g) {
  if (g.m <= 0 || g.n <= 0) return;
  LT_CHECK(g.dtype == DType::F32 || g.dtype == DType::F64, "gemm on {}", dtype_name(g.dtype));
  if (g.dtype == DType::F64) gemm_typed<double>(g);
  else gemm_typed<float>(g);
}

void matmul(const ir::MatMulAttrs& at, Ins in, Outs out) {
  const TensorRef &a = in[0], &b = in[1], &y = out[0];
  const Shape &as = a.shape(), &bs = b.shape(), &ys = y.shape();
  const size_t r = ys.size();
  const int64_t m = ys[r - 2], n = ys[r - 1];
  const int64_t k = at.transpose_a ? as.end()[-2] : as.end()[-1];
  const int64_t batch = y.numel() / std::max<int64_t>(1, m * n);
  if (y.numel() == 0) return;
  const size_t esize = dtype_size(y.dtype());
  GemmArgs g{.dtype = y.dtype(), .trans_a = at.transpose_a, .trans_b = at.transpose_b,
             .m = m, .n = n, .k = k, .a = a.data, .lda = as.end()[-1], .b = b.data,
             .ldb = bs.end()[-1], .c = y.data, .ldc = n};
  const int64_t a_batch = a.numel() / std::max<int64_t>(1, m * k);
  const int64_t b_batch = b.numel() / std::max<int64_t>(1, k * n);
  // x[B..., M, K] @ w[K, N] is one tall GEMM: the batch rows of A are contiguous already.
  if (batch == 1 || (b_batch == 1 && a_batch == batch && !at.transpose_a && m * k > 0)) {
    g.m = m * batch;
    return gemm(g);
  }
  const std::vector<int64_t> aoff = batch_offsets(as, ys, m * k);
  const std::vector<int64_t> boff = batch_offsets(bs, ys, k * n);
  auto one = [&](int64_t i, bool parallel) {
    GemmArgs gi = g;
    gi.a = static_cast<const char*>(a.data) + aoff[i] * esize;
    gi.b = static_cast<const char*>(b.data) + boff[i] * esize;
    gi.c = static_cast<char*>(y.data) + i * m * n * esize;
    gi.parallel = parallel;
    gemm(gi);
  };
  // Many small matrices: one thread per run of matrices. Few large ones: split each GEMM.
  const double flops = 2.0 * m * n * k;
  if (batch >= 2 * num_threads() || flops < num_threads() * kMinFlopsPerPart) {
    const int64_t grain = std::max<int64_t>(1, kMinFlopsPerPart / std::max(1.0, flops));
    parallel_for(batch, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) one(i, false);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, true);
  }
}

void run_library(ir::LibraryOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  using ir::LibraryOp;
  switch (op) {
    case LibraryOp::MatMul: return matmul(std::get<ir::MatMulAttrs>(attrs), in, out);
    case LibraryOp::Conv2d: return conv2d(std::get<ir::ConvAttrs>(attrs), in, out);
    case LibraryOp::Conv2dInputGrad:
      return conv2d_input_grad(std::get<ir::ConvAttrs>(attrs), in, out);
    case LibraryOp::Conv2dWeightGrad:
      return conv2d_weight_grad(std::get<ir::ConvAttrs>(attrs), in, out);
    case LibraryOp::MaxPool2d: return max_pool2d(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::MaxPool2dGrad: return max_pool2d_grad(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::AvgPool2d: return avg_pool2d(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::AvgPool2dGrad: return avg_pool2d_grad(std::get<ir::PoolAttrs>(attrs), in, out);
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
