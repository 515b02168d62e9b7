// Batched matmul over rt::gemm.
#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

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

/// The spacing of evenly spaced offsets (0 when all are equal), or -1.
int64_t evenly_spaced(const std::vector<int64_t>& off) {
  const int64_t step = off.size() > 1 ? off[1] - off[0] : 0;
  if (step < 0) return -1;
  for (size_t i = 1; i < off.size(); ++i)
    if (off[i] - off[i - 1] != step) return -1;
  return step;
}

void matmul_into(const ir::MatMulAttrs& at, Ins in, Outs out) {
  const TensorRef &a = in[0], &b = in[1], &y = out[0];
  const Shape &as = a.shape(), &bs = b.shape(), &ys = y.shape();
  const size_t r = ys.size();
  const int64_t m = ys[r - 2], n = ys[r - 1];
  const int64_t k = at.transpose_a ? as.end()[-2] : as.end()[-1];
  const int64_t batch = y.numel() / std::max<int64_t>(1, m * n);
  if (y.numel() == 0) return;
  // With f32_out, bf16 or f16 operands give an f32 result (the accumulator, unrounded).
  const size_t esize = dtype_size(a.dtype()), ysize = dtype_size(y.dtype());
  GemmArgs g{.dtype = a.dtype(), .trans_a = at.transpose_a, .trans_b = at.transpose_b,
             .m = m, .n = n, .k = k, .a = a.data, .lda = as.end()[-1], .b = b.data,
             .ldb = bs.end()[-1], .c = y.data, .ldc = n, .c_dtype = y.dtype()};
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
    gi.c = static_cast<char*>(y.data) + i * m * n * ysize;
    gi.parallel = parallel;
    gemm(gi);
  };
  // Many small matrices: one thread per run of matrices, as one batched GEMM where each operand
  // has a matrix of its own per output matrix, evenly spaced (no broadcast batch dim: oneDNN's
  // batched primitive with a broadcast operand does not always give the bits of one GEMM at a
  // time). Few large ones: split each GEMM.
  const double flops = 2.0 * m * n * k;
  if (batch >= 2 * num_threads() || flops < num_threads() * kGemmMinFlopsPerPart) {
    const int64_t grain = std::max<int64_t>(1, kGemmMinFlopsPerPart / std::max(1.0, flops));
    const int64_t sa = evenly_spaced(aoff), sb = evenly_spaced(boff);
    parallel_for(batch, grain, [&](int64_t lo, int64_t hi) {
      if (sa > 0 && sb > 0) {
        GemmArgs gi = g;
        gi.a = static_cast<const char*>(a.data) + aoff[lo] * esize;
        gi.b = static_cast<const char*>(b.data) + boff[lo] * esize;
        gi.c = static_cast<char*>(y.data) + lo * m * n * ysize;
        return gemm_batch(gi, hi - lo, sa, sb, m * n);
      }
      for (int64_t i = lo; i < hi; ++i) one(i, false);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, true);
  }
}

}  // namespace

void matmul(const ir::MatMulAttrs& at, Ins in, Outs out, const OutputBlocks* blocks) {
  matmul_into(at, in, out);
  if (!blocks) return;
  // The GEMM splits across columns, so no block of whole rows is done before all of it is.
  LT_CHECK(out[0].data && blocks->block_elems == out[0].numel(),
           "matmul: an epilogue takes the whole output, not blocks of {} of {} elements",
           blocks->block_elems, out[0].numel());
  blocks->done(0, out[0].numel(), out[0].data);
}

}  // namespace lt::rt
