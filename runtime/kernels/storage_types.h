// dispatch over every dtype, the 2-byte float storage types included (via Eigen's half and
// bfloat16). Kernel-internal: it pulls in Eigen.
#pragma once
#include <Eigen/Core>

#include "ir/elementwise_scalar.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

template <class F>
decltype(auto) dispatch_storage(DType t, F&& f) {
  switch (t) {
    case DType::F16: return f(Eigen::half{});
    case DType::BF16: return f(Eigen::bfloat16{});
    case DType::Bool: case DType::I32: case DType::I64: case DType::F32: case DType::F64: break;
  }
  return dispatch_dtype(t, std::forward<F>(f));
}

/// Value conversion between any two element types: ir::scalar::cast, the 2-byte float types
/// through float (which holds each of their values).
template <class D, class S>
D convert_value(S v) {
  if constexpr (std::is_same_v<S, Eigen::half> || std::is_same_v<S, Eigen::bfloat16>)
    return convert_value<D>(static_cast<float>(v));
  else if constexpr (std::is_same_v<D, Eigen::half> || std::is_same_v<D, Eigen::bfloat16>)
    return static_cast<D>(v);
  else
    return ir::scalar::cast<D>(v);
}

}  // namespace lt::rt
