// Iteration over a broadcast output: collapses dims, then walks runs of the innermost dim, each
// input with a stride of 0 (broadcast) or 1 (its own). Shared by the elementwise kernels.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "ir/shape.h"
#include "runtime/thread_pool.h"

namespace lt::rt {

template <int N>
struct BroadcastPlan {
  int64_t inner = 1;                                // length of a row
  std::vector<int64_t> outer;                       // collapsed outer dims
  std::array<std::vector<int64_t>, N> outer_stride;  // per input, per outer dim
  std::array<int64_t, N> inner_stride{};            // per input: 0 or 1
  int64_t rows() const {
    int64_t r = 1;
    for (int64_t d : outer) r *= d;
    return r;
  }
};

template <int N>
BroadcastPlan<N> make_broadcast_plan(const Shape& out, const std::array<const Shape*, N>& in) {
  const size_t r = out.size();
  std::vector<int64_t> dims(out.begin(), out.end());
  std::array<std::vector<int64_t>, N> st;
  for (int k = 0; k < N; ++k) {
    const Shape& s = *in[k];
    st[k].assign(r, 0);
    int64_t acc = 1;
    for (size_t i = r; i-- > 0;) {
      const size_t off = r - s.size();
      if (i < off) continue;
      const int64_t d = s[i - off];
      st[k][i] = d == 1 ? 0 : acc;
      acc *= d;
    }
  }
  // Merge dim i into i+1 when every input walks them as one run (size-1 dims merge freely).
  std::vector<int64_t> cd;
  std::array<std::vector<int64_t>, N> cs;
  for (size_t i = 0; i < r; ++i) {
    if (dims[i] == 1) continue;
    bool merge = !cd.empty();
    for (int k = 0; merge && k < N; ++k) merge = cs[k].back() == st[k][i] * dims[i];
    if (merge) {
      cd.back() *= dims[i];
      for (int k = 0; k < N; ++k) cs[k].back() = st[k][i];
    } else {
      cd.push_back(dims[i]);
      for (int k = 0; k < N; ++k) cs[k].push_back(st[k][i]);
    }
  }
  BroadcastPlan<N> p;
  if (cd.empty()) return p;  // scalar output
  p.inner = cd.back();
  cd.pop_back();
  p.outer = cd;
  for (int k = 0; k < N; ++k) {
    p.inner_stride[k] = cs[k].back();
    cs[k].pop_back();
    p.outer_stride[k] = cs[k];
  }
  return p;
}

/// The input offsets of successive rows, advanced like an odometer: one division per chunk of
/// rows instead of one per outer dim per row (rows of a few elements are common: [N,10] - [N,1]).
template <int N>
class RowCursor {
 public:
  RowCursor(const BroadcastPlan<N>& p, int64_t row) : p_(p), index_(p.outer.size(), 0) {
    off_.fill(0);
    for (size_t d = p.outer.size(); d-- > 0;) {
      index_[d] = row % p.outer[d];
      row /= p.outer[d];
      for (int k = 0; k < N; ++k) off_[k] += index_[d] * p.outer_stride[k][d];
    }
  }
  const std::array<int64_t, N>& offsets() const { return off_; }
  void next() {
    for (size_t d = index_.size(); d-- > 0;) {
      for (int k = 0; k < N; ++k) off_[k] += p_.outer_stride[k][d];
      if (++index_[d] < p_.outer[d]) return;
      for (int k = 0; k < N; ++k) off_[k] -= index_[d] * p_.outer_stride[k][d];
      index_[d] = 0;
    }
  }

 private:
  const BroadcastPlan<N>& p_;
  std::vector<int64_t> index_;
  std::array<int64_t, N> off_;
};

/// Calls run(out_offset, in_offsets, len) over runs covering the output, in parallel: a run is a
/// row, or a piece of about `grain` elements of a long row, so that few long rows (a scalar
/// against a tensor collapses to one row) still split across threads.
template <int N, class RunFn>
void for_each_run(const BroadcastPlan<N>& p, int64_t grain, RunFn&& run) {
  const int64_t piece = std::max<int64_t>(1, std::min(p.inner, grain));
  const int64_t pieces = (p.inner + piece - 1) / piece;  // per row
  const int64_t runs = p.rows() * pieces;
  const int64_t runs_per_grain = std::max<int64_t>(1, grain / piece);
  parallel_for(runs, runs_per_grain, [&](int64_t b, int64_t e) {
    RowCursor<N> row(p, b / pieces);
    int64_t r = b / pieces, k = b % pieces;
    for (int64_t u = b; u < e; ++u) {
      const int64_t col = k * piece;
      std::array<int64_t, N> off = row.offsets();
      for (int i = 0; i < N; ++i) off[i] += col * p.inner_stride[i];
      run(r * p.inner + col, off, std::min(piece, p.inner - col));
      if (++k == pieces) {
        k = 0;
        ++r;
        row.next();
      }
    }
  });
}

}  // namespace lt::rt
