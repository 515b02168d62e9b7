// An op's result types, one per result: what the type rules return and the nodes keep.
#pragma once
#include "ir/recycling_allocator.h"
#include "ir/shape.h"

namespace lt {

/// Every traced op makes one, so its block is recycled per thread (most ops have one result).
using TypeList = RecycledVector<TensorType>;

}  // namespace lt
