// One hash for everything the compiler keys on: the structural hash of a graph (ir::Graph or the
// tracer's pending nodes, which must agree bit for bit), attributes, plans and cache keys.
// Fast and well spread, not cryptographic: equal keys are still compared where a collision
// would matter (cse compares nodes; the graph cache trusts 64 bits, as XLA's does).
#pragma once
#include <cstdint>
#include <string_view>

#include "ir/shape.h"

namespace lt::ir {

/// The combine step (boost-style, with the golden-ratio constant).
inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

/// Accumulates a hash value by value. Every structural hash in lazytrain goes through it.
class Hasher {
 public:
  explicit Hasher(uint64_t seed = 0x6c617a79ULL) : h_(seed) {}

  Hasher& add(uint64_t v) {
    h_ = hash_mix(h_, v);
    return *this;
  }
  Hasher& add(const TensorType& t) {
    add(static_cast<uint64_t>(t.dtype) + 1);
    for (int64_t d : t.shape) add(static_cast<uint64_t>(d));
    return add(t.shape.size());
  }
  Hasher& add(std::string_view s);
  uint64_t value() const { return h_; }

 private:
  uint64_t h_;
};

}  // namespace lt::ir
