// Reductions. The input shape is collapsed into runs of kept and reduced dims; when the innermost
// run is reduced each output reduces contiguous rows, otherwise whole rows of outputs accumulate
// input rows (vectorizable either way).
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

using enum ir::ReduceOp;

struct Collapsed {
  std::vector<int64_t> dims, strides;
  std::vector<bool> reduced;
};

Collapsed collapse(const Shape& shape, const ir::ReduceAttrs& a) {
  Collapsed c;
  const auto st = contiguous_strides(shape);
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool red = a.axes.empty() || std::binary_search(a.axes.begin(), a.axes.end(), int64_t(i));
    if (shape[i] == 1) continue;
    if (!c.dims.empty() && c.reduced.back() == red) {
      c.dims.back() *= shape[i];
      c.strides.back() = st[i];
    } else {
      c.dims.push_back(shape[i]);
      c.strides.push_back(st[i]);
      c.reduced.push_back(red);
    }
  }
  return c;
}

// Accumulators: T in, A accumulated, R out.
/// a + b; for signed integers two's-complement wrapping, as the compiled kernels add (signed
/// overflow would be undefined behaviour here).
template <class T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
struct SumOp {
  using A = T;
  static A init() { return A(0); }
  static A step(A a, T v) { return wrapping_add(a, v); }
  static A merge_run(A a, const T* p, int64_t n) {
    if constexpr (std::is_floating_point_v<T>)
      return a + Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>(p, n).sum();
    else {
      for (int64_t i = 0; i < n; ++i) a = wrapping_add(a, p[i]);
      return a;
    }
  }
};
template <class T>
struct ProdOp {
  using A = T;
  static A init() { return A(1); }
  static A step(A a, T v) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(v)));
    } else {
      return a * v;
    }
  }
  static A merge_run(A a, const T* p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i]);
    return a;
  }
};
template <class T>
struct MaxOp {
  using A = T;
  static A init() { return std::numeric_limits<T>::lowest(); }
  static A step(A a, T v) { return (v > a || v != v) ? v : a; }
  static A merge_run(A a, const T* p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i]);
    return a;
  }
};
template <class T>
struct MinOp {
  using A = T;
  static A init() { return std::numeric_limits<T>::max(); }
  static A step(A a, T v) { return (v < a || v != v) ? v : a; }
  static A merge_run(A a, const T* p, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a = step(a, p[i]);
    return a;
  }
};

/// Visits every input offset that reduces into output `o`, as contiguous runs when possible.
/// `kept_index` walks the kept dims of the collapsed shape in row-major order.
template <class RunFn>
void visit_reduced(const Collapsed& c, int64_t base, RunFn&& run) {
  // Reduced dims other than the innermost one are walked by an odometer.
  std::vector<size_t> rd;
  for (size_t i = 0; i < c.dims.size(); ++i)
    if (c.reduced[i]) rd.push_back(i);
  const bool inner_red = !c.dims.empty() && c.reduced.back();
  const size_t outer_n = inner_red ? rd.size() - 1 : rd.size();
  const int64_t run_len = inner_red ? c.dims.back() : 1;
  std::vector<int64_t> idx(outer_n, 0);
  for (;;) {
    int64_t off = base;
    for (size_t k = 0; k < outer_n; ++k) off += idx[k] * c.strides[rd[k]];
    run(off, run_len);
    size_t k = outer_n;
    while (k > 0) {
      --k;
      if (++idx[k] < c.dims[rd[k]]) break;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (outer_n == 0) return;
  }
}

int64_t kept_base(const Collapsed& c, int64_t o, int64_t skip_inner) {
  // Offset of output `o` (row-major over kept dims, the innermost kept dim dropped if asked).
  int64_t base = 0;
  for (size_t i = c.dims.size() - skip_inner; i-- > 0;) {
    if (c.reduced[i]) continue;
    base += (o % c.dims[i]) * c.strides[i];
    o /= c.dims[i];
  }
  return base;
}

int64_t reduced_count(const Collapsed& c) {
  int64_t n = 1;
  for (size_t i = 0; i < c.dims.size(); ++i)
    if (c.reduced[i]) n *= c.dims[i];
  return n;
}

/// out[o] = Fold over the reduced elements of output o; `map` transforms each input first.
template <class Op, class T, class Map>
void fold(const Collapsed& c, const T* x, typename Op::A* out, int64_t nout, Map map) {
  const bool inner_kept = !c.dims.empty() && !c.reduced.back();
  if (!inner_kept) {
    parallel_for(nout, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, reduced_count(c))),
                 [&](int64_t b, int64_t e) {
                   for (int64_t o = b; o < e; ++o) {
                     typename Op::A acc = Op::init();
                     visit_reduced(c, kept_base(c, o, 0), [&](int64_t off, int64_t n) {
                       if constexpr (std::is_same_v<Map, std::nullptr_t>) {
                         acc = Op::merge_run(acc, x + off, n);
                       } else {
                         // Plain order: a temporary's alignment must not change the result.
                         for (int64_t i = 0; i < n; ++i) acc = Op::step(acc, map(o, x[off + i]));
                       }
                     });
                     out[o] = acc;
                   }
                 });
    return;
  }
  // Innermost dim kept: accumulate whole input rows into rows of outputs.
  const int64_t k = c.dims.back();
  const int64_t rows = nout / k;
  parallel_for(rows, 1, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      typename Op::A* acc = out + r * k;
      for (int64_t j = 0; j < k; ++j) acc[j] = Op::init();
      visit_reduced(c, kept_base(c, r, 1), [&](int64_t off, int64_t) {
        const T* row = x + off;
        if constexpr (std::is_same_v<Map, std::nullptr_t>) {
          for (int64_t j = 0; j < k; ++j) acc[j] = Op::step(acc[j], row[j]);
        } else {
          for (int64_t j = 0; j < k; ++j) acc[j] = Op::step(acc[j], map(r * k + j, row[j]));
        }
      });
    }
  });
}

/// The index of the first maximum (kMax) or minimum along the one reduced axis; a NaN wins over
/// every number (the first NaN), as PyTorch's argmax and argmin.
template <class T, bool kMax>
void arg_best(const Collapsed& c, const T* x, int64_t* out, int64_t nout) {
  // One reduced axis (type rule); its run may be inner (stride 1) or strided.
  size_t ax = 0;
  while (ax < c.dims.size() && !c.reduced[ax]) ++ax;
  if (ax == c.dims.size()) {  // reduced axis of size 1
    for (int64_t o = 0; o < nout; ++o) out[o] = 0;
    return;
  }
  const int64_t n = c.dims[ax], stride = c.strides[ax];
  parallel_for(nout, 64, [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* p = x + kept_base(c, o, 0);
      int64_t best = 0;
      for (int64_t i = 1; i < n; ++i) {
        const T v = p[i * stride], b = p[best * stride];
        if ((kMax ? v > b : v < b) || (v != v && b == b)) best = i;
      }
      out[o] = best;
    }
  });
}

}  // namespace

void run_reduce(ir::ReduceOp op, const ir::ReduceAttrs& a, Ins in, Outs out) {
  const int64_t nout = out[0].numel();
  if (nout == 0) return;
  if (in[0].numel() == 0) {  // a reduction over an empty axis: only sum and prod (type rule)
    if (op == Prod) {
      dispatch_dtype(out[0].dtype(), [&](auto t) {
        using T = decltype(t);
        std::fill_n(out[0].as<T>(), nout, T(1));
      });
    } else {
      std::memset(out[0].data, 0, out[0].type->bytes());
    }
    return;
  }
  const Collapsed c = collapse(in[0].shape(), a);
  dispatch_dtype(in[0].dtype(), [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bool>) {
      LT_UNREACHABLE();
    } else {
      const T* x = in[0].as<T>();
      switch (op) {
        case Sum: return fold<SumOp<T>>(c, x, out[0].as<T>(), nout, nullptr);
        case Mean: {
          T* o = out[0].as<T>();
          fold<SumOp<T>>(c, x, o, nout, nullptr);
          const T inv = T(1) / static_cast<T>(reduced_count(c));
          for (int64_t i = 0; i < nout; ++i) o[i] *= inv;
          return;
        }
        case ReduceMax: return fold<MaxOp<T>>(c, x, out[0].as<T>(), nout, nullptr);
        case ReduceMin: return fold<MinOp<T>>(c, x, out[0].as<T>(), nout, nullptr);
        case Prod: return fold<ProdOp<T>>(c, x, out[0].as<T>(), nout, nullptr);
        case ArgMax: return arg_best<T, true>(c, x, out[0].as<int64_t>(), nout);
        case ArgMin: return arg_best<T, false>(c, x, out[0].as<int64_t>(), nout);
        case LogSumExp: {
          if constexpr (std::is_floating_point_v<T>) {
            T* o = out[0].as<T>();
            std::vector<T> m(nout);
            fold<MaxOp<T>>(c, x, m.data(), nout, nullptr);
            for (T& v : m) if (!std::isfinite(v)) v = 0;  // all -inf rows: log(0) = -inf below
            fold<SumOp<T>>(c, x, o, nout, [&](int64_t oi, T v) { return std::exp(v - m[oi]); });
            for (int64_t i = 0; i < nout; ++i) o[i] = std::log(o[i]) + m[i];
          }
          return;
        }
      }
      LT_UNREACHABLE();
    }
  });
}

}  // namespace lt::rt
