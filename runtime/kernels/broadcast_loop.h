// Iteration over a broadcast output: collapses dims, then walks rows of the innermost dim, each
// input with a stride of 0 (broadcast) or its own. Shared by the elementwise kernels.
#pragma once
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

/// Calls row(out_offset, in_offsets, inner_len, inner_strides) for every row, in parallel.
template <int N, class RowFn>
void for_each_row(const BroadcastPlan<N>& p, RowFn&& row) {
  const int64_t rows = p.rows();
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(1, p.inner));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::array<int64_t, N> off;
    for (int64_t rix = b; rix < e; ++rix) {
      off.fill(0);
      int64_t rem = rix;
      for (size_t d = p.outer.size(); d-- > 0;) {
        const int64_t i = rem % p.outer[d];
        rem /= p.outer[d];
        for (int k = 0; k < N; ++k) off[k] += i * p.outer_stride[k][d];
      }
      row(rix * p.inner, off);
    }
  });
}

}  // namespace lt::rt
