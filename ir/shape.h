// Static shapes and tensor types (dtype + shape), with the broadcasting rule all ops share.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/dims.h"
#include "ir/dtype.h"

namespace lt {

using Shape = Dims;

/// The most elements a shape may describe, counting its non-zero dims only: every partial
/// product (numel, strides) and every byte size then fits int64, in any dim order, and so do
/// the sums a buffer plan takes of thousands of them. The parser and the type rules enforce it.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;
/// Whether every dim is >= 0 and the non-zero dims multiply to at most kMaxElements.
bool shape_fits(std::span<const int64_t> shape);

int64_t numel(std::span<const int64_t> shape);
/// Row-major strides in elements.
Dims contiguous_strides(std::span<const int64_t> shape);
/// "[4,8]"
std::string shape_str(std::span<const int64_t> shape);

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return lt::numel(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  bool operator==(const TensorType&) const = default;
};

/// "f32[4,8]"; a scalar prints as "f32[]".
std::string type_str(const TensorType& t);

/// NumPy broadcast of two shapes; false when a dimension pair is neither equal nor 1.
bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b, Shape* out);

}  // namespace lt
