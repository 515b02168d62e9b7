// How rt::gemm splits one GEMM over the thread pool, shared by every dtype's backend.
#pragma once
#include <algorithm>
#include <cstdint>

#include "ir/dtype.h"
#include "runtime/kernels/gemm.h"
#include "runtime/thread_pool.h"

namespace lt::rt {

// Split blocks stay multiples of this, so each part keeps the backend's register tiles full.
inline constexpr int64_t kGemmSplitAlign = 16;

/// Calls block(m0, m1, n0, n1) for the blocks C[m0:m1, n0:n1] that together make up the GEMM,
/// over the thread pool when it is large enough (one block on the calling thread otherwise).
template <class F>
void for_each_gemm_block(const GemmArgs& g, F&& block) {
  const double flops = 2.0 * g.m * g.n * g.k;
  const int64_t parts =
      g.parallel ? std::min<int64_t>(num_threads(), flops / kGemmMinFlopsPerPart) : 1;
  if (parts <= 1) return block(0, g.m, 0, g.n);
  // A split of M packs all of B in every part, a split of N all of A. Splitting N measured as
  // fast or faster at the MLP's shapes (M = batch 128, N and K 512-784) and for fc layers; M is
  // split only when it is much the longer side (tall im2col products).
  const bool split_m = g.m >= 2 * g.n;
  const int64_t len = split_m ? g.m : g.n;
  int64_t step = (len + parts - 1) / parts;
  step = std::min(len, (step + kGemmSplitAlign - 1) / kGemmSplitAlign * kGemmSplitAlign);
  const int64_t chunks = (len + step - 1) / step;
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t lo = i * step, hi = std::min(len, lo + step);
      if (split_m) block(lo, hi, 0, g.n);
      else block(0, g.m, lo, hi);
    }
  });
}

/// The GEMM that computes the block C[m0:m1, n0:n1] of g on the calling thread.
inline GemmArgs gemm_block_args(const GemmArgs& g, int64_t m0, int64_t m1, int64_t n0,
                                int64_t n1) {
  // A is stored [m, k] or, transposed, [k, m]; B is stored [k, n] or [n, k].
  const int64_t a_off = g.trans_a ? m0 : m0 * g.lda, b_off = g.trans_b ? n0 * g.ldb : n0;
  GemmArgs p = g;
  p.m = m1 - m0;
  p.n = n1 - n0;
  p.a = static_cast<const char*>(g.a) + a_off * dtype_size(g.a_type());
  p.b = static_cast<const char*>(g.b) + b_off * dtype_size(g.b_type());
  p.c = static_cast<char*>(g.c) + (m0 * g.ldc + n0) * dtype_size(g.c_type());
  p.parallel = false;
  return p;
}

}  // namespace lt::rt
