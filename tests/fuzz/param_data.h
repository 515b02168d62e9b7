// Parameter data for fuzzed graphs, and reading buffer elements back as doubles.
#pragma once
#include <cstdint>
#include <memory>

#include "ir/shape.h"
#include "runtime/buffer.h"
#include "tests/fuzz/input_rng.h"

namespace lt::fuzz {

/// Data of type t drawn from rng. Floats mostly uniform in [-2, 2]; with `specials`, also -0,
/// subnormal, huge, +-inf and NaN. Integers in [-9, 9], or in [0, 3] (valid ids for small
/// tables) on some draws; bools 0 and 1.
std::shared_ptr<rt::Buffer> random_buffer(const TensorType& t, InputRng& rng, bool specials);

/// Element i of a buffer of dtype dt, exactly (f16 and bf16 widened; bool 0 or 1).
double element(DType dt, const rt::Buffer& b, int64_t i);

/// A copy of b's bytes in a new buffer.
std::shared_ptr<rt::Buffer> copy_of(const rt::Buffer& b);

}  // namespace lt::fuzz
