// The meaning of each elementwise.def row on one element of type T (bool, int32_t, int64_t,
// float, double): a struct named as the row's enumerator, whose static apply() is the one
// definition that fold evaluates, that the eager kernels (and so the reference interpreter) run,
// and that codegen's scalar emitter spells in LLVM IR. Code generic over the rows reaches a
// row's struct as Fn<E> and its operand types through its columns (takes<T>), so a row without
// a struct here does not compile. Eager kernels may compute the transcendental rows with
// vectorized approximations (Eigen), within a few ulps, but take their constants from here.
//
// Integers wrap (two's complement): -INT_MIN == INT_MIN, INT_MIN / -1 == INT_MIN; division by
// zero is an error the caller reports. Floats follow IEEE: maximum/minimum propagate NaN and
// keep the first operand on ties; relu(NaN) = 0; abs(-0.0) = -0.0 (x < 0 ? -x : x); comparisons
// with NaN are false except ne; casts to bool are `x != 0` in the source type (NaN is true);
// float to integer casts saturate and take NaN to 0.
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "ir/op.h"

namespace lt::ir::scalar {

/// gelu, tanh form: x/2 (1 + tanh(kGeluScale (x + kGeluCubic x^3))).
inline constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)
inline constexpr double kGeluCubic = 0.044715;
inline constexpr double kSqrtHalf = 0.7071067811865476;  // gelu_erf: erf(x sqrt(1/2))
inline constexpr double kInvSqrt2Pi = 0.3989422804014327;  // gelu_erf_grad: phi(0) = 1/sqrt(2 pi)

template <class T>
constexpr bool kIsSignedInt = std::is_integral_v<T> && std::is_signed_v<T>;

/// Whether an operand column takes operands of C++ type T: generic code instantiates a row's
/// struct only for these (float-only rows never see an integer).
template <class T>
constexpr bool takes(OperandKind k) {
  if constexpr (std::is_same_v<T, bool>) return takes_bool(k);
  else if constexpr (std::is_integral_v<T>) return takes_integers(k);
  else return takes_floats(k);
}

/// The value x of type S as an element of type D holds it. Float to integer truncates toward
/// zero, saturates past D's range and takes NaN to 0 (LLVM's fptosi.sat, which codegen emits; a
/// plain C++ conversion is undefined there).
template <class D, class S>
D cast(S x) {
  if constexpr (std::is_same_v<D, bool>) {
    return x != S(0);
  } else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>) {
    using Lim = std::numeric_limits<D>;
    if (x != x) return D(0);
    // min is a power of two, exact in S; max rounds up to -min, the first value past the range.
    if (x <= static_cast<S>(Lim::min())) return Lim::min();
    if (x >= -static_cast<S>(Lim::min())) return Lim::max();
    return static_cast<D>(x);
  } else {
    return static_cast<D>(x);
  }
}

/// Signed integers in their unsigned type, where overflow wraps (signed overflow is undefined).
template <class T, class F>
T wrapping(T a, T b, F f) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return f(a, b);
  }
}

// --- unary ------------------------------------------------------------------------------------

struct Neg {
  template <class T>
  static T apply(T x) {
    if constexpr (kIsSignedInt<T>) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));
    else return -x;
  }
};
struct Abs {
  template <class T>
  static T apply(T x) { return x < T(0) ? Neg::apply(x) : x; }
};
struct Exp {
  template <class T>
  static T apply(T x) { return std::exp(x); }
};
/// e^x - 1, accurate also where e^x rounds to 1 (|x| tiny: exp(x) - 1 keeps no digit), as
/// PyTorch's.
struct Expm1 {
  template <class T>
  static T apply(T x) { return std::expm1(x); }
};
struct Log {
  template <class T>
  static T apply(T x) { return std::log(x); }
};
/// log(1 + x), accurate also where 1 + x rounds to 1 (|x| tiny: log(1 + x) keeps no digit), as
/// PyTorch's.
struct Log1p {
  template <class T>
  static T apply(T x) { return std::log1p(x); }
};
struct Sqrt {
  template <class T>
  static T apply(T x) { return std::sqrt(x); }
};
struct Rsqrt {
  template <class T>
  static T apply(T x) { return T(1) / std::sqrt(x); }
};
struct Tanh {
  template <class T>
  static T apply(T x) { return std::tanh(x); }
};
struct Sigmoid {
  template <class T>
  static T apply(T x) { return T(1) / (T(1) + std::exp(-x)); }
};
struct Relu {
  template <class T>
  static T apply(T x) { return x > T(0) ? x : T(0); }
};
struct Gelu {
  /// The formula in S arithmetic on x, a value or (the eager kernel) an Eigen array, with the
  /// caller's tanh: one expression, so both evaluate it in the same order.
  template <class S, class X, class TanhFn>
  static auto formula(const X& x, TanhFn tanh) {
    return S(0.5) * x * (S(1) + tanh(S(kGeluScale) * (x + S(kGeluCubic) * x * x * x)));
  }
  template <class T>
  static T apply(T x) { return formula<T>(x, [](T v) { return std::tanh(v); }); }
};
struct Sin {
  template <class T>
  static T apply(T x) { return std::sin(x); }
};
struct Cos {
  template <class T>
  static T apply(T x) { return std::cos(x); }
};
struct Reciprocal {
  template <class T>
  static T apply(T x) { return T(1) / x; }
};

/// erf of a float: x P(x^2) / Q(x^2) with x clamped to [-4, 4] (erf(4) is 1 in float), a
/// rational least-squares fit to erf/x of degrees 6 and 4 in x^2, evaluated by Horner's rule in
/// fused multiply-adds: within 7.3 float ulps and
/// 4.4e-7 relative of erf everywhere, exact at +-0, +-1 at +-inf, NaN kept. libm's erff is a call
/// per element; this is a dozen multiply-adds that vectorize (exact GELU runs erf on every
/// activation of a transformer's MLP). Coefficients are float values, lowest power first.
inline constexpr double kErfP[] = {1.1283791065216064,     0.20240913331508636,
                                   0.05088622868061066,    0.0037908630911260843,
                                   0.00014265012578107417, -1.9292360775580164e-06,
                                   1.9298983744420184e-08};
inline constexpr double kErfQ[] = {1.0, 0.5127123594284058, 0.11600899696350098,
                                   0.014549758285284042, 0.0009732876787893474};
inline constexpr double kErfClamp = 4.0;

/// erf: the rational form above for float (codegen emits the same expression), libm otherwise.
struct Erf {
  template <class T>
  static T apply(T x) {
    if constexpr (std::is_same_v<T, float>) {
      const float c = x < -float(kErfClamp) ? -float(kErfClamp)
                      : x > float(kErfClamp) ? float(kErfClamp)
                                             : x;
      const float t = c * c;
      // Explicit fused multiply-adds: exactly rounded, so every mode gets the same bits whatever
      // the compiler would contract.
      float p = float(kErfP[6]);
      for (int i = 5; i >= 0; --i) p = std::fma(p, t, float(kErfP[i]));
      float q = float(kErfQ[4]);
      for (int i = 3; i >= 0; --i) q = std::fma(q, t, float(kErfQ[i]));
      return c * p / q;
    } else {
      return std::erf(x);
    }
  }
};
/// Exact GELU, x Phi(x) = x/2 (1 + erf(x / sqrt(2))), through the erf above.
struct GeluErf {
  template <class T>
  static T apply(T x) { return T(0.5) * x * (T(1) + Erf::apply(x * T(kSqrtHalf))); }
};
/// The slope of gelu_erf, Phi(x) + x phi(x), with Phi(x) through the erf above (in the same
/// expression as gelu_erf, so a kernel computing both computes it once).
struct GeluErfGrad {
  /// The argument of phi's exp, -x^2/2 (the eager kernel computes that exp vectorized).
  template <class T>
  static T exp_arg(T x) { return T(-0.5) * x * x; }
  /// The slope from x and e = exp(exp_arg(x)).
  template <class T>
  static T with_exp(T x, T e) {
    return T(0.5) * (T(1) + Erf::apply(x * T(kSqrtHalf))) + x * (e * T(kInvSqrt2Pi));
  }
  template <class T>
  static T apply(T x) { return with_exp(x, std::exp(exp_arg(x))); }
};
struct Floor {
  template <class T>
  static T apply(T x) { return std::floor(x); }
};
struct Ceil {
  template <class T>
  static T apply(T x) { return std::ceil(x); }
};
/// To the nearest integer, halves to even (PyTorch's round; std::nearbyint in the default
/// rounding mode).
struct Round {
  template <class T>
  static T apply(T x) { return std::nearbyint(x); }
};
/// Toward zero; integers are their own trunc (the frontend passes them through).
struct Trunc {
  template <class T>
  static T apply(T x) { return std::trunc(x); }
};
struct IsFinite {
  template <class T>
  static bool apply(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
    else return true;
  }
};
/// To the attribute's dtype D (scalar::cast); in the operands' own type, the identity.
struct Cast {
  template <class D, class S>
  static D apply(S x) { return cast<D>(x); }
};

// --- binary, where ----------------------------------------------------------------------------

struct Add {
  template <class T>
  static T apply(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x + y; }); }
};
struct Sub {
  template <class T>
  static T apply(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x - y; }); }
};
struct Mul {
  template <class T>
  static T apply(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x * y; }); }
};
/// Integers truncate toward zero; b must not be 0 (the row's checks column: the eager kernel
/// throws, fold leaves it).
struct Div {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (kIsSignedInt<T>) {
      if (b == T(-1)) return Neg::apply(a);  // min / -1 overflows (x86 traps): it wraps to min
    }
    return a / b;
  }
};
/// Integers as PyTorch's powi: by squaring, wrapping; a negative exponent gives 0 except for the
/// bases 1 (1) and -1 (-1 for an odd exponent, else 1). bool is refused (no operand column).
struct Pow {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b < T(0)) {
        if (a == T(1)) return T(1);
        if (a == T(-1)) return (b % T(2)) != T(0) ? T(-1) : T(1);
        return T(0);
      }
      using U = std::make_unsigned_t<T>;
      U r = 1, base = static_cast<U>(a);
      for (U e = static_cast<U>(b); e != 0; e >>= 1) {
        if (e & 1) r = static_cast<U>(r * base);
        base = static_cast<U>(base * base);
      }
      return static_cast<T>(r);
    } else {
      return std::pow(a, b);
    }
  }
};
struct Maximum {
  template <class T>
  static T apply(T a, T b) { return (a > b || a != a) ? a : b; }
};
struct Minimum {
  template <class T>
  static T apply(T a, T b) { return (a < b || a != a) ? a : b; }
};
/// Python's %: the remainder with the sign of b (a - floor(a / b) * b, computed exactly from
/// fmod for floats); integers: b must not be 0 (the checks column), min % -1 is 0.
struct Remainder {
  template <class T>
  static T apply(T a, T b) {
    T r;
    if constexpr (std::is_integral_v<T>) {
      if (b == T(-1)) return T(0);
      r = a % b;
    } else {
      r = std::fmod(a, b);
    }
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
  }
};
/// Python's //: floor(a / b). Integers: b must not be 0, min // -1 wraps to min. Floats as
/// PyTorch's div_floor: from fmod, so that a quotient that rounds onto an integer does not
/// floor below it; b = 0 gives a / b (inf or NaN), a zero quotient keeps a / b's sign.
struct FloorDivide {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if constexpr (kIsSignedInt<T>) {
        if (b == T(-1)) return Neg::apply(a);  // min / -1 overflows (x86 traps): it wraps
      }
      const T q = a / b;
      return (a % b != T(0) && ((a < T(0)) != (b < T(0)))) ? T(q - 1) : q;
    } else {
      if (b == T(0)) return a / b;
      const T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
      if (div == T(0)) return std::copysign(T(0), a / b);
      T floordiv = std::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    }
  }
};
/// C's fmod: a - trunc(a / b) * b with a's sign, exact for floats. Integers: b must not be 0 (the
/// checks column), min fmod -1 is 0.
struct Fmod {
  template <class T>
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == T(-1)) return T(0);
      return a % b;
    } else {
      return std::fmod(a, b);
    }
  }
};
struct Eq {
  template <class T>
  static bool apply(T a, T b) { return a == b; }
};
struct Ne {
  template <class T>
  static bool apply(T a, T b) { return a != b; }
};
struct Lt {
  template <class T>
  static bool apply(T a, T b) { return a < b; }
};
struct Le {
  template <class T>
  static bool apply(T a, T b) { return a <= b; }
};
struct Gt {
  template <class T>
  static bool apply(T a, T b) { return a > b; }
};
struct Ge {
  template <class T>
  static bool apply(T a, T b) { return a >= b; }
};
struct Where {
  template <class T>
  static T apply(bool c, T a, T b) { return c ? a : b; }
};
/// Two's complement on integers; on bool the logical operation.
struct BitwiseNot {
  template <class T>
  static T apply(T a) {
    if constexpr (std::is_same_v<T, bool>) return !a;
    else return static_cast<T>(~a);
  }
};
struct BitwiseAnd {
  template <class T>
  static T apply(T a, T b) { return static_cast<T>(a & b); }
};
struct BitwiseOr {
  template <class T>
  static T apply(T a, T b) { return static_cast<T>(a | b); }
};
struct BitwiseXor {
  template <class T>
  static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// --- by row -----------------------------------------------------------------------------------

template <ElementwiseOp E>
struct RowFn;
#define LT_OP(name, ...)              \
  template <>                         \
  struct RowFn<ElementwiseOp::name> { \
    using type = name;                \
  };
#include "ir/ops/elementwise.def"
#undef LT_OP

/// Row E's struct: scalar::<its enumerator name>.
template <ElementwiseOp E>
using Fn = typename RowFn<E>::type;

/// Row E on x[0], ..., x[arity - 1] in T (where's condition: x[0] != 0; cast: in T, the identity,
/// for the caller to convert). T must be one its operand column takes.
template <ElementwiseOp E, class T>
auto apply_row(std::span<const T> x) {
  constexpr OpInfo row = info(E);
  static_assert(takes<T>(row.operands));
  if constexpr (row.result == ResultKind::Attr) return Fn<E>::template apply<T>(x[0]);
  else if constexpr (row.operands == OperandKind::Select)
    return Fn<E>::apply(x[0] != T(0), x[1], x[2]);
  else if constexpr (row.arity == 1) return Fn<E>::apply(x[0]);
  else return Fn<E>::apply(x[0], x[1]);
}

/// Row op on x in T (a bool result as 0 or 1), or nullopt where its operand column does not
/// take T.
template <class T>
std::optional<T> evaluate(ElementwiseOp op, std::span<const T> x) {
  return visit_row(op, [&]<ElementwiseOp E>(Row<E>) -> std::optional<T> {
    if constexpr (takes<T>(info(E).operands)) return static_cast<T>(apply_row<E>(x));
    else return std::nullopt;
  });
}

}  // namespace lt::ir::scalar
