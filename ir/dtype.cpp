#include "ir/dtype.h"

namespace lt {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Bool: return 1;
    case DType::I32: return 4;
    case DType::I64: return 8;
    case DType::F16: return 2;
    case DType::BF16: return 2;
    case DType::F32: return 4;
    case DType::F64: return 8;
  }
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::F32: return "f32";
    case DType::F64: return "f64";
  }
  return "?";
}

bool parse_dtype(std::string_view name, DType* out) {
  for (DType t : kAllDTypes) {
    if (dtype_name(t) == name) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool is_float(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}
bool is_integer(DType t) { return t == DType::I32 || t == DType::I64; }
bool is_compute_type(DType t) { return t != DType::F16 && t != DType::BF16; }

bool holds_value(DType t, double v) {
  switch (t) {
    case DType::I32: return v > -2147483649.0 && v < 2147483648.0;  // false for NaN
    case DType::I64: return v >= -0x1p63 && v < 0x1p63;
    case DType::Bool:
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64: return true;
  }
  return false;
}

}  // namespace lt
