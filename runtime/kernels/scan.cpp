// Kernels along one axis that keep it: cumsum and topk, called by run_nn. x is viewed as
// [outer, n, inner] with the axis in the middle; lines of n elements are independent.
#include "runtime/kernels/scan.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

struct Lines {
  int64_t outer, n, inner;
};

Lines lines_of(const Shape& s, int64_t axis) {
  const std::span<const int64_t> d(s);
  return {numel(d.first(axis)), s[axis], numel(d.subspan(axis + 1))};
}

int64_t grain_for(int64_t elems) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, elems));
}

// Floats accumulate in double, as PyTorch's CPU cumsum does; integers in int64 (they wrap in
// their own width like every integer op).
template <class T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

template <class T>
void cumsum_t(const T* x, T* y, Lines l, bool reverse) {
  parallel_for(l.outer, grain_for(l.n * l.inner), [&](int64_t b, int64_t e) {
    std::vector<Acc<T>> acc(l.inner);
    for (int64_t o = b; o < e; ++o) {
      std::fill(acc.begin(), acc.end(), Acc<T>(0));
      for (int64_t s = 0; s < l.n; ++s) {
        const int64_t k = reverse ? l.n - 1 - s : s;
        const int64_t base = (o * l.n + k) * l.inner;
        for (int64_t j = 0; j < l.inner; ++j) {
          acc[j] += static_cast<Acc<T>>(x[base + j]);
          y[base + j] = static_cast<T>(acc[j]);
        }
      }
    }
  });
}

/// Whether (a, i) comes before (b, j) in topk's order: NaN above every number (PyTorch's), the
/// larger (smaller) value first, equal values by lower index.
template <class T>
bool before(T a, int64_t i, T b, int64_t j, bool largest) {
  bool an = false, bn = false;
  if constexpr (std::is_floating_point_v<T>) an = std::isnan(a), bn = std::isnan(b);
  if (an != bn) return largest ? an : bn;
  if (an || a == b) return i < j;
  return largest ? a > b : a < b;
}

template <class T>
void topk_t(const T* x, T* values, int64_t* indices, Lines l, int64_t k, bool largest) {
  if (k == 0) return;
  parallel_for(l.outer * l.inner, grain_for(l.n), [&](int64_t b, int64_t e) {
    std::vector<int64_t> order(l.n);
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / l.inner, j = line % l.inner;
      const T* xl = x + o * l.n * l.inner + j;
      std::iota(order.begin(), order.end(), int64_t{0});
      std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t p, int64_t q) {
        return before(xl[p * l.inner], p, xl[q * l.inner], q, largest);
      });
      const int64_t out = o * k * l.inner + j;
      for (int64_t r = 0; r < k; ++r) {
        values[out + r * l.inner] = xl[order[r] * l.inner];
        indices[out + r * l.inner] = order[r];
      }
    }
  });
}

}  // namespace

void cumsum(const ir::CumsumAttrs& a, Ins in, Outs out) {
  const Lines l = lines_of(in[0].shape(), a.axis);
  dispatch_dtype(in[0].dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) LT_UNREACHABLE();  // the type rule rejects bool
    else cumsum_t<T>(in[0].as<T>(), out[0].as<T>(), l, a.reverse);
  });
}

void topk(const ir::TopKAttrs& a, Ins in, Outs out) {
  const Lines l = lines_of(in[0].shape(), a.axis);
  dispatch_dtype(in[0].dtype(), [&](auto z) {
    using T = decltype(z);
    if constexpr (std::is_same_v<T, bool>) LT_UNREACHABLE();  // the type rule rejects bool
    else topk_t<T>(in[0].as<T>(), out[0].as<T>(), out[1].as<int64_t>(), l, a.k, a.largest);
  });
}

}  // namespace lt::rt
