// lt::Scalar: a C++ number as an op's operand (PyTorch's wrapped number). It keeps the number's
// category, which decides the result's dtype: ids_i64 * 2 stays i64, ids_i64 * 0.5 is f32.
#pragma once
#include <concepts>

#include "ir/dtype.h"

namespace lt {

class Scalar {
 public:
  template <class T>
    requires std::same_as<T, bool>
  Scalar(T v) : value_(v ? 1.0 : 0.0), dtype_(DType::Bool) {}  // NOLINT: implicit on purpose
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Scalar(T v) : value_(static_cast<double>(v)), dtype_(DType::I64) {}  // NOLINT
  template <std::floating_point T>
  Scalar(T v) : value_(static_cast<double>(v)), dtype_(DType::F64) {}  // NOLINT

  double value() const { return value_; }
  /// bool, i64 for every integer type, f64 for every floating-point type (as PyTorch wraps them).
  DType dtype() const { return dtype_; }

 private:
  double value_;
  DType dtype_;
};

}  // namespace lt
