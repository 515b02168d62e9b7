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

namespace {

int category(DType t) { return t == DType::Bool ? 0 : is_integer(t) ? 1 : 2; }

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (category(a) == 1) return DType::I64;  // i32 with i64
  // Floats: the wider one; f16 and bf16 each lack the other's range or precision.
  if (a == DType::F64 || b == DType::F64) return DType::F64;
  return DType::F32;
}

bool can_cast(DType from, DType to) { return category(from) <= category(to); }

std::string_view torch_name(DType t) {
  switch (t) {
    case DType::Bool: return "Bool";
    case DType::I32: return "Int";
    case DType::I64: return "Long";
    case DType::F16: return "Half";
    case DType::BF16: return "BFloat16";
    case DType::F32: return "Float";
    case DType::F64: return "Double";
  }
  return "?";
}

}  // namespace lt
