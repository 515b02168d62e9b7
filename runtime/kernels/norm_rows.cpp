// Rows of channels go in blocks of whole rows whose length is a whole number of vectors where
// that is short (16 channels: one row; 3 channels: 8 rows of 24 elements), so every sum and every
// affine map runs on full vectors with per-element channel coefficients repeated across the block,
// and the per-row overhead of a short row is paid once per block.
#include "runtime/kernels/norm_rows.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "runtime/kernels/double_lanes.h"
#include "runtime/kernels/storage_types.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

// Rows per block: lcm(c, kVec) / c, unless that block would be longer than this many elements
// (then one row, its last c % kVec elements summed one at a time).
constexpr int64_t kMaxBlockElems = 4096;
// Elements per block of the affine maps, at least.
constexpr int64_t kAffineBlockElems = 256;

struct RowBlocks {
  int64_t n, c;  // c > 0
  int64_t rows;         // per block
  int64_t elems;        // per block: rows * c
  int64_t vecs, tail;   // elems = vecs * kVec + tail
  int64_t chunk_rows;   // rows per parallel chunk, a multiple of `rows`
  int64_t chunks;

  /// Blocks of at least min_elems elements where rows are short (the affine maps, whose loop
  /// over a block then runs long enough to pay for its start).
  RowBlocks(int64_t n_, int64_t c_, int64_t min_elems = 0) : n(n_), c(c_) {
    const int64_t l = std::lcm(c, int64_t{kVec});
    rows = l <= kMaxBlockElems ? l / c : 1;
    if (rows * c < min_elems) rows *= (min_elems + rows * c - 1) / (rows * c);
    elems = rows * c;
    vecs = elems / kVec;
    tail = elems % kVec;
    // About 32K elements per chunk, and at most 64 chunks (bounding the partial sums).
    constexpr int64_t kChunkElems = 1 << 15, kMaxChunks = 64;
    const int64_t want = std::max({int64_t{1}, kChunkElems / c, (n + kMaxChunks - 1) / kMaxChunks});
    chunk_rows = (want + rows - 1) / rows * rows;
    chunks = (n + chunk_rows - 1) / chunk_rows;
  }
  int64_t acc_vecs() const { return vecs + (tail > 0); }
};

/// v repeated over a block, as doubles in vectors (the last one partly used).
template <class T>
std::vector<VecD> repeat_wide(const RowBlocks& rb, const T* v) {
  std::vector<VecD> out(rb.acc_vecs(), VecD{});
  for (int64_t e = 0; e < rb.elems; ++e)
    out[e / kVec][e % kVec] = convert_value<double>(v[e % rb.c]);
  return out;
}

template <class T>
std::vector<T> repeat(const RowBlocks& rb, const T* v) {
  std::vector<T> out(rb.elems);
  for (int64_t e = 0; e < rb.elems; ++e) out[e] = v[e % rb.c];
  return out;
}

/// The per-channel total of per-chunk accumulators (each rb.acc_vecs() vectors), in chunk order.
std::vector<double> fold(const RowBlocks& rb, const std::vector<VecD>& partial, int64_t which,
                         int64_t per_chunk) {
  std::vector<double> sum(rb.c, 0.0);
  for (int64_t k = 0; k < rb.chunks; ++k) {
    const VecD* acc = partial.data() + k * per_chunk + which * rb.acc_vecs();
    for (int64_t e = 0; e < rb.elems; ++e) sum[e % rb.c] += acc[e / kVec][e % kVec];
  }
  return sum;
}

/// Calls f(block start element, elements) for each block of rows [r0, r1): whole blocks, then
/// the rows left over (fewer than a block, at the end).
template <class F>
void for_blocks(const RowBlocks& rb, int64_t r0, int64_t r1, F&& f) {
  int64_t r = r0;
  for (; r + rb.rows <= r1; r += rb.rows) f(r * rb.c, rb.elems);
  if (r < r1) f(r * rb.c, (r1 - r) * rb.c);
}

/// Two sums per element over rows of blocks: with Moments, of d and d^2 with d = x - shift; else
/// of gy and gy * (x - shift) (batch norm's gradient).
template <bool Moments, class T, class X>
struct PairSums {
  const X* x;
  const T* gy;  // unused with Moments

  // Lane `lane` of a and b (a vector element is no lvalue a reference binds to, in clang).
  void element(int64_t e, double shift, VecD& a, VecD& b, int lane) const {
    const double d = convert_value<double>(x[e]) - shift;
    if constexpr (Moments) {
      a[lane] += d;
      b[lane] += d * d;
    } else {
      a[lane] += gy[e];
      b[lane] += gy[e] * d;
    }
  }
  void vector(int64_t at, const VecD& shift, VecD& a, VecD& b) const {
    VecD d;
    load_wide(x + at, d);
    d -= shift;
    if constexpr (Moments) {
      a += d;
      b += d * d;
    } else {
      VecD g;
      load_wide(gy + at, g);
      a += g;
      b += g * d;
    }
  }
};

/// a[v] and b[v] += the sums of vector v over `blocks` whole blocks of NV vectors from element
/// `at`: the accumulators stay in registers through the loop.
template <int NV, class Sums>
void whole_blocks(const Sums& s, int64_t at, int64_t blocks, const VecD* shift, VecD* a,
                  VecD* b) {
  VecD sa[NV] = {}, sb[NV] = {}, sh[NV];
  for (int v = 0; v < NV; ++v) sh[v] = shift[v];
  for (int64_t i = 0; i < blocks; ++i)
    for (int v = 0; v < NV; ++v) s.vector(at + (i * NV + v) * kVec, sh[v], sa[v], sb[v]);
  for (int v = 0; v < NV; ++v) {
    a[v] += sa[v];
    b[v] += sb[v];
  }
}

/// whole_blocks for a run-time vector count of 1 to 8 and no tail; false otherwise.
template <class Sums>
bool whole_blocks(const RowBlocks& rb, const Sums& s, int64_t at, int64_t blocks,
                  const VecD* shift, VecD* a, VecD* b) {
  if (rb.tail != 0) return false;
  switch (rb.vecs) {
    case 1: whole_blocks<1>(s, at, blocks, shift, a, b); return true;
    case 2: whole_blocks<2>(s, at, blocks, shift, a, b); return true;
    case 3: whole_blocks<3>(s, at, blocks, shift, a, b); return true;
    case 4: whole_blocks<4>(s, at, blocks, shift, a, b); return true;
    case 5: whole_blocks<5>(s, at, blocks, shift, a, b); return true;
    case 6: whole_blocks<6>(s, at, blocks, shift, a, b); return true;
    case 7: whole_blocks<7>(s, at, blocks, shift, a, b); return true;
    case 8: whole_blocks<8>(s, at, blocks, shift, a, b); return true;
    default: return false;
  }
}

/// The two per-channel sums of `s` over all n rows, shift[j] taken from channel j.
template <class Sums, class S>
void pair_sums(const Sums& s, int64_t n, int64_t c, const S* shift, double* sum_a,
               double* sum_b) {
  if (c == 0) return;
  const RowBlocks rb(n, c);
  const int64_t nv = rb.acc_vecs();
  const std::vector<VecD> sh = repeat_wide(rb, shift);
  std::vector<VecD> partial(rb.chunks * 2 * nv);
  parallel_for(rb.chunks, 1, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      VecD* a = partial.data() + k * 2 * nv;
      VecD* b = a + nv;
      const int64_t r0 = k * rb.chunk_rows, r1 = std::min(n, (k + 1) * rb.chunk_rows);
      const int64_t whole = (r1 - r0) / rb.rows;
      const bool done = whole_blocks(rb, s, r0 * rb.c, whole, sh.data(), a, b);
      for_blocks(rb, done ? r0 + whole * rb.rows : r0, r1, [&](int64_t at, int64_t len) {
        const int64_t full = len == rb.elems ? rb.vecs : 0;
        for (int64_t v = 0; v < full; ++v) s.vector(at + v * kVec, sh[v], a[v], b[v]);
        for (int64_t e = full * kVec; e < len; ++e)
          s.element(at + e, sh[e / kVec][e % kVec], a[e / kVec], b[e / kVec], e % kVec);
      });
    }
  });
  const std::vector<double> s1 = fold(rb, partial, 0, 2 * nv), s2 = fold(rb, partial, 1, 2 * nv);
  std::copy(s1.begin(), s1.end(), sum_a);
  std::copy(s2.begin(), s2.end(), sum_b);
}

}  // namespace

template <class X>
void row_channel_moments(const X* x, int64_t n, int64_t c, const X* shift, double* sum_d,
                         double* sum_d2) {
  pair_sums(PairSums<true, float, X>{x, nullptr}, n, c, shift, sum_d, sum_d2);
}

template <class T, class X>
void row_channel_grad_sums(const T* gy, const X* x, int64_t n, int64_t c, const T* mean,
                           double* sum_gy, double* sum_gy_dev) {
  pair_sums(PairSums<false, T, X>{x, gy}, n, c, mean, sum_gy, sum_gy_dev);
}

template <class T, class X>
void row_channel_affine(const X* x, T* y, int64_t n, int64_t c, const T* scale, const T* shift) {
  if (c == 0) return;
  const RowBlocks rb(n, c, kAffineBlockElems);
  const std::vector<T> sc = repeat(rb, scale), sh = repeat(rb, shift);
  const T *s = sc.data(), *h = sh.data();
  parallel_for(rb.chunks, 1, [&](int64_t k0, int64_t k1) {
    for_blocks(rb, k0 * rb.chunk_rows, std::min(n, k1 * rb.chunk_rows),
               [&](int64_t at, int64_t len) {
                 T* yp = y + at;
                 in_wide_chunks(x + at, len, [&](auto xs, int64_t e0, int64_t e1) {
                   for (int64_t e = e0; e < e1; ++e)
                     yp[e] = std::fma(load_as<T>(xs, e - e0), s[e], h[e]);
                 });
               });
  });
}

template <class T, class X, class D>
void row_channel_grad_apply(const T* gy, const X* x, D* dx, int64_t n, int64_t c, const T* a,
                            const T* mu, const T* b, const T* k) {
  if (c == 0) return;
  const RowBlocks rb(n, c, kAffineBlockElems);
  const std::vector<T> av = repeat(rb, a), mv = repeat(rb, mu), bv = repeat(rb, b),
                       kv = repeat(rb, k);
  const T *ap = av.data(), *mp = mv.data(), *bp = bv.data(), *kp = kv.data();
  parallel_for(rb.chunks, 1, [&](int64_t k0, int64_t k1) {
    for_blocks(rb, k0 * rb.chunk_rows, std::min(n, k1 * rb.chunk_rows),
               [&](int64_t at, int64_t len) {
                 const T* g = gy + at;
                 D* d = dx + at;
                 in_wide_chunks(x + at, len, [&](auto xs, int64_t e0, int64_t e1) {
                   for (int64_t e = e0; e < e1; ++e)
                     store_as(d, e, std::fma(g[e], ap[e],
                                             std::fma(load_as<T>(xs, e - e0) - mp[e], bp[e],
                                                      kp[e])));
                 });
               });
  });
}

#define LT_NORM_ROWS(T, X)                                                                     \
  template void row_channel_moments(const X*, int64_t, int64_t, const X*, double*, double*);   \
  template void row_channel_grad_sums(const T*, const X*, int64_t, int64_t, const T*, double*, \
                                      double*);                                                \
  template void row_channel_affine(const X*, T*, int64_t, int64_t, const T*, const T*);        \
  template void row_channel_grad_apply(const T*, const X*, T*, int64_t, int64_t, const T*,     \
                                       const T*, const T*, const T*);
LT_NORM_ROWS(float, float)
LT_NORM_ROWS(double, double)
LT_NORM_ROWS(float, Eigen::bfloat16)
LT_NORM_ROWS(float, Eigen::half)
#undef LT_NORM_ROWS
// A bf16 dx, from an x of any of batch norm's float types with f32 statistics.
#define LT_NORM_ROWS_BF16_DX(X)                                                                \
  template void row_channel_grad_apply(const float*, const X*, Eigen::bfloat16*, int64_t,       \
                                       int64_t, const float*, const float*, const float*,       \
                                       const float*);
LT_NORM_ROWS_BF16_DX(float)
LT_NORM_ROWS_BF16_DX(Eigen::bfloat16)
LT_NORM_ROWS_BF16_DX(Eigen::half)
#undef LT_NORM_ROWS_BF16_DX

}  // namespace lt::rt
