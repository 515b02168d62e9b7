// The meaning of each elementwise.def row on one element of type T (bool, int32_t, int64_t,
// float, double): the one definition that fold evaluates, that the eager kernels (and so the
// reference interpreter) run, and that codegen's scalar emitter spells in LLVM IR. Eager kernels
// may compute the transcendental rows with vectorized approximations (Eigen), within a few ulps,
// but take their constants from here.
//
// Integers wrap (two's complement): -INT_MIN == INT_MIN, INT_MIN / -1 == INT_MIN; division by
// zero is an error the caller reports. Floats follow IEEE: maximum/minimum propagate NaN and
// keep the first operand on ties; relu(NaN) = 0; abs(-0.0) = -0.0 (x < 0 ? -x : x); comparisons
// with NaN are false except ne; casts to bool are `x != 0` in the source type (NaN is true);
// float to integer casts saturate and take NaN to 0.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

namespace lt::ir::scalar {

/// gelu, tanh form: x/2 (1 + tanh(kGeluScale (x + kGeluCubic x^3))).
inline constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)
inline constexpr double kGeluCubic = 0.044715;
inline constexpr double kSqrtHalf = 0.7071067811865476;  // gelu_erf: erf(x sqrt(1/2))
inline constexpr double kInvSqrt2Pi = 0.3989422804014327;  // gelu_erf_grad: phi(0) = 1/sqrt(2 pi)

template <class T>
constexpr bool kIsSignedInt = std::is_integral_v<T> && std::is_signed_v<T>;

template <class T>
T neg(T x) {
  if constexpr (kIsSignedInt<T>) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));
  else return -x;
}
template <class T>
T abs(T x) { return x < T(0) ? neg(x) : x; }
template <class T>
T relu(T x) { return x > T(0) ? x : T(0); }
template <class T>
T exp(T x) { return std::exp(x); }
template <class T>
T log(T x) { return std::log(x); }
template <class T>
T sqrt(T x) { return std::sqrt(x); }
template <class T>
T rsqrt(T x) { return T(1) / std::sqrt(x); }
template <class T>
T tanh(T x) { return std::tanh(x); }
template <class T>
T sigmoid(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T>
T gelu(T x) {
  return T(0.5) * x * (T(1) + std::tanh(T(kGeluScale) * (x + T(kGeluCubic) * x * x * x)));
}
template <class T>
T sin(T x) { return std::sin(x); }
template <class T>
T cos(T x) { return std::cos(x); }
template <class T>
T reciprocal(T x) { return T(1) / x; }
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
template <class T>
T erf(T x) {
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
/// Exact GELU, x Phi(x) = x/2 (1 + erf(x / sqrt(2))), through the erf above.
template <class T>
T gelu_erf(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(kSqrtHalf)));
}
/// The slope of gelu_erf, Phi(x) + x phi(x), with Phi(x) through the erf above (in the same
/// expression as gelu_erf, so a kernel computing both computes it once).
template <class T>
T gelu_erf_grad(T x) {
  return T(0.5) * (T(1) + erf(x * T(kSqrtHalf))) + x * (std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi));
}
template <class T>
bool isfinite(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
  else return true;
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
template <class T>
T add(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x + y; }); }
template <class T>
T sub(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x - y; }); }
template <class T>
T mul(T a, T b) { return wrapping(a, b, [](auto x, auto y) { return x * y; }); }
/// Integers truncate toward zero; b must not be 0.
template <class T>
T div(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    if (b == T(-1)) return neg(a);  // min / -1 overflows (x86 traps): it wraps to min
  }
  return a / b;
}
/// Float only (the type rule rejects integers).
template <class T>
T pow(T a, T b) { return std::pow(a, b); }
template <class T>
T maximum(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T>
T minimum(T a, T b) { return (a < b || a != a) ? a : b; }
template <class T>
bool eq(T a, T b) { return a == b; }
template <class T>
bool ne(T a, T b) { return a != b; }
template <class T>
bool lt(T a, T b) { return a < b; }
template <class T>
bool le(T a, T b) { return a <= b; }
template <class T>
bool gt(T a, T b) { return a > b; }
template <class T>
bool ge(T a, T b) { return a >= b; }
template <class T>
T where(bool c, T a, T b) { return c ? a : b; }

}  // namespace lt::ir::scalar
