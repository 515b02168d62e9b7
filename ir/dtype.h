// Element types. bf16 and f16 are storage types (casts only) until AMP adds arithmetic for them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lt {

enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };

inline constexpr DType kAllDTypes[] = {DType::Bool, DType::I32, DType::I64, DType::F16,
                                       DType::BF16, DType::F32, DType::F64};

/// Bytes per element.
size_t dtype_size(DType t);
/// Short name used in IR text and errors: "f32", "i64", "bool", ...
std::string_view dtype_name(DType t);
/// Inverse of dtype_name; false when the name is unknown.
bool parse_dtype(std::string_view name, DType* out);
bool is_float(DType t);    // f16, bf16, f32, f64
bool is_integer(DType t);  // i32, i64
/// Types the CPU kernels compute in (not only store): bool, i32, i64, f32, f64.
bool is_compute_type(DType t);
/// Whether v converts to t with a defined result: any v for float and bool dtypes; for integer
/// dtypes a finite v whose truncation toward zero fits (attribute values such as full's).
bool holds_value(DType t, double v);

/// The dtype a C++ floating-point number becomes and integers divide into (PyTorch's default
/// dtype, torch.get_default_dtype()).
inline constexpr DType kDefaultFloat = DType::F32;
/// The smallest dtype both convert to (torch.promote_types): bool < integers < floats, by width
/// within a category; f16 with bf16 is f32.
DType promote_types(DType a, DType b);
/// Whether a result of dtype `from` may be written to a tensor of dtype `to` (torch.can_cast):
/// never to a lower category (float to an integer, a number to bool).
bool can_cast(DType from, DType to);
/// PyTorch's name of the dtype in its errors: "Float", "Long", "Bool", "BFloat16", ...
std::string_view torch_name(DType t);

}  // namespace lt
