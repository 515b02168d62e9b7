// The index-taking kernels along one axis, called by run_nn: gather reads x at the index's
// positions, scatter and scatter_add write src there into a copy of x. The index may be smaller
// than x and src in any dim; its element at coordinates c names x's element at c with c[axis]
// replaced by the index's value, and src's element at c.
#include "runtime/kernels/gather.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

// Indices are data, so only the kernel can check them. Workers must not throw: each chunk
// records its first bad position, and the least of them, the first overall whatever the split,
// is thrown by the calling thread.
void check_indices(const char* op, const int64_t* index, int64_t n, int64_t axis, int64_t limit) {
  std::atomic<int64_t> first{n};
  parallel_for(n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if (index[i] >= 0 && index[i] < limit) continue;
      int64_t cur = first.load();
      while (i < cur && !first.compare_exchange_weak(cur, i)) {
      }
      return;
    }
  });
  const int64_t pos = first.load();
  if (pos < n)
    throw Error(fmt::format("{}: index {} is out of bounds for dimension {} with size {}", op,
                            index[pos], axis, limit));
}

/// The index's elements as `count` lines of `n` along dim `along`, walked with an odometer over
/// the other dims. x's offsets leave the axis out: there the index's value is x's coordinate.
struct Lines {
  int64_t along, count, n;
  Shape shape;  // the index's
  Dims index_st, x_st, src_st;
  int64_t x_axis_st;  // x's stride on the axis
};

Lines lines_of(const Shape& index, const Shape& x, const Shape& src, int64_t axis,
               int64_t along) {
  Lines l{along, 1, index[along], index, contiguous_strides(index), contiguous_strides(x),
          contiguous_strides(src), 0};
  for (size_t d = 0; d < index.size(); ++d)
    if (static_cast<int64_t>(d) != along) l.count *= index[d];
  l.x_axis_st = std::exchange(l.x_st[axis], 0);
  return l;
}

struct Offsets {
  int64_t index = 0, x = 0, src = 0;
  void step(const Lines& l, int64_t d, int64_t times) {
    index += times * l.index_st[d], x += times * l.x_st[d], src += times * l.src_st[d];
  }
};

/// Calls f(offsets of the line's first element) for each line in [b, e).
template <class F>
void for_lines(const Lines& l, int64_t b, int64_t e, F&& f) {
  const int64_t rank = static_cast<int64_t>(l.shape.size());
  std::vector<int64_t> c(rank, 0);
  Offsets o;
  for (int64_t d = rank, rest = b; d-- > 0;) {
    if (d == l.along) continue;
    c[d] = rest % l.shape[d];
    rest /= l.shape[d];
    o.step(l, d, c[d]);
  }
  for (int64_t line = b; line < e; ++line) {
    f(o);
    for (int64_t d = rank; d-- > 0;) {
      if (d == l.along) continue;
      if (++c[d] < l.shape[d]) {
        o.step(l, d, 1);
        break;
      }
      o.step(l, d, 1 - c[d]);
      c[d] = 0;
    }
  }
}

int64_t grain_for(int64_t n) { return std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(1, n)); }

// Lines along the last dim, the index's and y's contiguous runs.
template <class T>
void gather_t(const Lines& l, const T* x, const int64_t* index, T* y) {
  const int64_t is = l.index_st[l.along], xs = l.x_st[l.along], xa = l.x_axis_st;
  parallel_for(l.count, grain_for(l.n), [&](int64_t b, int64_t e) {
    for_lines(l, b, e, [&](const Offsets& o) {
      for (int64_t k = 0; k < l.n; ++k)
        y[o.index + k * is] = x[o.x + k * xs + index[o.index + k * is] * xa];
    });
  });
}

// Lines along the axis: two lines differ in another coordinate, so they never write the same
// element of y, and each line's writes land in the index's order (the last write wins).
template <class T>
void scatter_t(const Lines& l, const int64_t* index, const T* src, T* y, bool add) {
  const int64_t is = l.index_st[l.along], ss = l.src_st[l.along], xa = l.x_axis_st;
  parallel_for(l.count, grain_for(l.n), [&](int64_t b, int64_t e) {
    for_lines(l, b, e, [&](const Offsets& o) {
      for (int64_t k = 0; k < l.n; ++k) {
        T& out = y[o.x + index[o.index + k * is] * xa];
        const T v = src[o.src + k * ss];
        if constexpr (std::is_same_v<T, bool>) out = v || (add && out);
        else out = add ? static_cast<T>(out + v) : v;
      }
    });
  });
}

}  // namespace

void gather(int64_t axis, Ins in, Outs out) {
  const TensorRef &x = in[0], &index = in[1];
  check_indices("gather", index.as<int64_t>(), index.numel(), axis, x.shape()[axis]);
  if (index.numel() == 0) return;
  const int64_t last = index.rank() - 1;
  const Lines l = lines_of(index.shape(), x.shape(), index.shape(), axis, last);
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    gather_t(l, x.as<T>(), index.as<int64_t>(), out[0].as<T>());
  });
}

void scatter(int64_t axis, bool add, Ins in, Outs out) {
  const TensorRef &x = in[0], &index = in[1], &src = in[2];
  check_indices(add ? "scatter_add" : "scatter", index.as<int64_t>(), index.numel(), axis,
                x.shape()[axis]);
  if (out[0].data != x.data) std::memcpy(out[0].data, x.data, x.type->bytes());
  if (index.numel() == 0) return;
  const Lines l = lines_of(index.shape(), x.shape(), src.shape(), axis, axis);
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    scatter_t(l, index.as<int64_t>(), src.as<T>(), out[0].as<T>(), add);
  });
}

}  // namespace lt::rt
