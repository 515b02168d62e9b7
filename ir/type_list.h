// An op's result types, one per result: what the type rules return and the nodes keep.
#pragma once
#include <utility>

#include "ir/recycling_allocator.h"
#include "ir/shape.h"

namespace lt {

/// Every traced op makes one, so its block is recycled per thread (most ops have one result).
using TypeList = RecycledVector<TensorType>;

/// A list of one type, its shape moved in (a braced list would copy it).
inline TypeList one_type(DType dtype, Shape shape) {
  TypeList out;
  out.push_back({dtype, std::move(shape)});
  return out;
}

}  // namespace lt
