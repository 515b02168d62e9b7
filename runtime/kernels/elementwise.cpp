// Elementwise kernels. Unary float math goes through Eigen's vectorized array functions; binary
// and ternary ops walk broadcast rows (broadcast_loop.h) with contiguous fast paths.
#include <Eigen/Core>
#include <cmath>
#include <type_traits>

#include "ir/error.h"
#include "runtime/kernels/broadcast_loop.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/storage_types.h"

namespace lt::rt {
namespace {

using enum ir::ElementwiseOp;
constexpr int64_t kGrain = 16384;

template <class T>
using ArrMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <class T>
void unary_float(ir::ElementwiseOp op, const T* x, T* y, int64_t n) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    ConstArrMap<T> a(x + b, e - b);
    ArrMap<T> o(y + b, e - b);
    switch (op) {
      case Exp: o = a.exp(); break;
      case Log: o = a.log(); break;
      case Sqrt: o = a.sqrt(); break;
      case Rsqrt: o = a.rsqrt(); break;
      case Tanh: o = a.tanh(); break;
      case Sigmoid: o = a.logistic(); break;
      case Sin: o = a.sin(); break;
      case Cos: o = a.cos(); break;
      case Reciprocal: o = a.inverse(); break;
      case Gelu: {
        const T c = T(0.7978845608028654);  // sqrt(2/pi)
        o = T(0.5) * a * (T(1) + (c * (a + T(0.044715) * a * a * a)).tanh());
        break;
      }
      default: LT_UNREACHABLE();
    }
  });
}

template <class T>
void unary_any(ir::ElementwiseOp op, const T* x, void* yv, int64_t n) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    if (op == IsFinite) {
      bool* y = static_cast<bool*>(yv);
      for (int64_t i = b; i < e; ++i) {
        if constexpr (std::is_floating_point_v<T>) y[i] = std::isfinite(x[i]);
        else y[i] = true;
      }
      return;
    }
    T* y = static_cast<T*>(yv);
    switch (op) {
      case Neg: for (int64_t i = b; i < e; ++i) y[i] = -x[i]; break;
      case Abs: for (int64_t i = b; i < e; ++i) y[i] = x[i] < T(0) ? -x[i] : x[i]; break;
      case Relu: for (int64_t i = b; i < e; ++i) y[i] = x[i] > T(0) ? x[i] : T(0); break;
      default: LT_UNREACHABLE();
    }
  });
}

// Casts: every pair of dtypes, the 2-byte float types through Eigen's half/bfloat16.
void cast(const TensorRef& x, const TensorRef& y) {
  dispatch_storage(x.dtype(), [&](auto s) {
    dispatch_storage(y.dtype(), [&](auto d) {
      using S = decltype(s);
      using D = decltype(d);
      const S* src = x.as<S>();
      D* dst = y.as<D>();
      parallel_for(x.numel(), kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) dst[i] = convert_value<D>(src[i]);
      });
    });
  });
}

// --- binary ---------------------------------------------------------------------------------

template <class T>
struct BinaryFns {
  static T add(T a, T b) { return a + b; }
  static T sub(T a, T b) { return a - b; }
  static T mul(T a, T b) { return a * b; }
  static T div(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      // min / -1 overflows (x86 traps): it wraps to min, as two's complement negation does.
      if (b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
    }
    return a / b;
  }
  static T pow(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return std::pow(a, b);
    else return a;  // unreachable: the type rule allows float only
  }
  static T maximum(T a, T b) { return (a > b || a != a) ? a : b; }
  static T minimum(T a, T b) { return (a < b || a != a) ? a : b; }
};

template <class R, class T, class F>
void binary_loop(const TensorRef& a, const TensorRef& b, const TensorRef& out, F f) {
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  R* po = out.as<R>();
  if (a.shape() == out.shape() && b.shape() == out.shape()) {
    parallel_for(out.numel(), kGrain, [&](int64_t s, int64_t e) {
      for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
    });
    return;
  }
  const auto plan = make_broadcast_plan<2>(out.shape(), {&a.shape(), &b.shape()});
  const int64_t n = plan.inner;
  const int64_t sa = plan.inner_stride[0], sb = plan.inner_stride[1];
  for_each_row(plan, [&](int64_t o, const std::array<int64_t, 2>& off) {
    const T* x = pa + off[0];
    const T* y = pb + off[1];
    R* z = po + o;
    if (sa && sb) for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], y[i]);
    else if (sa) { const T yv = *y; for (int64_t i = 0; i < n; ++i) z[i] = f(x[i], yv); }
    else if (sb) { const T xv = *x; for (int64_t i = 0; i < n; ++i) z[i] = f(xv, y[i]); }
    else { const R v = f(*x, *y); for (int64_t i = 0; i < n; ++i) z[i] = v; }
  });
}

// Each op is passed as a lambda (a distinct type), never as a function pointer: one shared
// pointer-typed instantiation would keep the call out of line and the loop scalar (10x slower).
template <class T>
void binary(ir::ElementwiseOp op, const TensorRef& a, const TensorRef& b, const TensorRef& o) {
  using B = BinaryFns<T>;
  switch (op) {
    case Add: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::add(x, y); });
    case Sub: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::sub(x, y); });
    case Mul: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::mul(x, y); });
    case Div:
      if constexpr (std::is_integral_v<T>) {
        const T* pb = b.as<T>();
        for (int64_t i = 0; i < b.numel(); ++i)
          if (pb[i] == 0) throw Error("div: integer division by zero");
      }
      return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::div(x, y); });
    case Pow: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::pow(x, y); });
    case Maximum: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::maximum(x, y); });
    case Minimum: return binary_loop<T, T>(a, b, o, [](T x, T y) { return B::minimum(x, y); });
    case Eq: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x == y; });
    case Ne: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x != y; });
    case Lt: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x < y; });
    case Le: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x <= y; });
    case Gt: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x > y; });
    case Ge: return binary_loop<bool, T>(a, b, o, [](T x, T y) { return x >= y; });
    default: LT_UNREACHABLE();
  }
}

template <class T>
void where(const TensorRef& c, const TensorRef& a, const TensorRef& b, const TensorRef& out) {
  const auto plan = make_broadcast_plan<3>(out.shape(), {&c.shape(), &a.shape(), &b.shape()});
  const bool* pc = c.as<bool>();
  const T* pa = a.as<T>();
  const T* pb = b.as<T>();
  T* po = out.as<T>();
  const int64_t n = plan.inner;
  const auto s = plan.inner_stride;
  for_each_row(plan, [&](int64_t o, const std::array<int64_t, 3>& off) {
    const bool* x = pc + off[0];
    const T* y = pa + off[1];
    const T* z = pb + off[2];
    T* r = po + o;
    if (s[0] && s[1] && s[2]) for (int64_t i = 0; i < n; ++i) r[i] = x[i] ? y[i] : z[i];
    else for (int64_t i = 0; i < n; ++i) r[i] = x[i * s[0]] ? y[i * s[1]] : z[i * s[2]];
  });
}

}  // namespace

void run_elementwise(ir::ElementwiseOp op, const ir::Attrs&, Ins in, Outs out) {
  switch (op) {
    case Exp: case Log: case Sqrt: case Rsqrt: case Tanh: case Sigmoid: case Gelu: case Sin:
    case Cos: case Reciprocal:
      return dispatch_float(in[0].dtype(), [&](auto t) {
        using T = decltype(t);
        unary_float<T>(op, in[0].as<T>(), out[0].as<T>(), out[0].numel());
      });
    case Neg: case Abs: case Relu: case IsFinite:
      return dispatch_dtype(in[0].dtype(), [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_same_v<T, bool>) LT_UNREACHABLE();  // rejected by the type rule
        else unary_any<T>(op, in[0].as<T>(), out[0].data, out[0].numel());
      });
    case Cast: return cast(in[0], out[0]);
    case Add: case Sub: case Mul: case Div: case Pow: case Maximum: case Minimum: case Eq:
    case Ne: case Lt: case Le: case Gt: case Ge:
      return dispatch_dtype(in[0].dtype(), [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_same_v<T, bool>) {
          if (op != Eq && op != Ne) LT_UNREACHABLE();
          binary_loop<bool, bool>(in[0], in[1], out[0],
                                  [op](bool x, bool y) { return op == Eq ? x == y : x != y; });
        } else {
          binary<T>(op, in[0], in[1], out[0]);
        }
      });
    case Where:
      return dispatch_dtype(in[1].dtype(), [&](auto t) {
        where<decltype(t)>(in[0], in[1], in[2], out[0]);
      });
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
