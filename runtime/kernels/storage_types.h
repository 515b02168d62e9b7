// dispatch over every dtype, the 2-byte float storage types included (via Eigen's half and
// bfloat16). Kernel-internal: it pulls in Eigen.
#pragma once
#include <Eigen/Core>

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
    return static_cast<D>(static_cast<float>(v));
  else return static_cast<D>(v);
}

}  // namespace lt::rt
