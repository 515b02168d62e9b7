// dispatch over every dtype, the 2-byte float storage types included (via Eigen's half and
// bfloat16). Kernel-internal: it pulls in Eigen.
#pragma once
#include <Eigen/Core>

#include <limits>
#include <type_traits>

#include "runtime/kernels/kernel.h"

namespace lt::rt {

template <class F>
decltype(auto) dispatch_storage(DType t, F&& f) {
  switch (t) {
    case DType::F16: return f(Eigen::half{});
    case DType::BF16: return f(Eigen::bfloat16{});
    default: return dispatch_dtype(t, std::forward<F>(f));
  }
}

/// Float to integer: truncation toward zero, saturating past the range, NaN to 0 (the semantics
/// of LLVM's fptosi.sat, which compiled casts use; a plain C++ conversion is undefined there).
template <class D, class F>
D saturating_cast(F v) {
  if (!(v == v)) return D{0};
  if (v <= static_cast<F>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
  if (v >= static_cast<F>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
  return static_cast<D>(v);
}

/// Value conversion between any two element types (bool: nonzero is true).
template <class D, class S>
D convert_value(S v) {
  if constexpr (std::is_same_v<D, bool>) {
    if constexpr (std::is_same_v<S, Eigen::half> || std::is_same_v<S, Eigen::bfloat16>)
      return static_cast<float>(v) != 0.0f;
    else
      return v != S(0);  // in the source type: 1e-310 is true
  }
  else if constexpr (std::is_same_v<S, Eigen::half> || std::is_same_v<S, Eigen::bfloat16>)
    return convert_value<D>(static_cast<float>(v));
  else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>)
    return saturating_cast<D>(v);
  else return static_cast<D>(v);
}

}  // namespace lt::rt
