// The structural hash of a graph, fed node by node so that the tracer can hash its pending nodes
// without building an ir::Graph (a cache hit must stay cheap) and still get exactly
// structural_hash of the graph it would build. The order is fixed: nodes in id order, then the
// results, the donations, and last the parameter types (the tracer discovers parameters while it
// walks the nodes).
#pragma once
#include <span>

#include "ir/graph.h"
#include "ir/hash.h"

namespace lt::ir {

inline uint64_t value_key(Value v) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(v.def)) << 32) |
         static_cast<uint32_t>(v.index);
}

class StructuralHasher {
 public:
  void node(Op op, const Attrs& attrs, std::span<const Value> inputs,
            std::span<const TensorType> types) {
    h_.add(static_cast<uint64_t>(op) + 0x1000).add(attrs_hash(attrs)).add(inputs.size());
    for (Value v : inputs) h_.add(value_key(v));
    for (const TensorType& t : types) h_.add(t);
  }
  void results(std::span<const Value> results) {
    h_.add(results.size());
    for (Value v : results) h_.add(value_key(v));
  }
  void donations(std::span<const Donation> donations) {
    h_.add(donations.size());
    for (const Donation& d : donations)
      h_.add((static_cast<uint64_t>(d.param) << 32) | static_cast<uint32_t>(d.result));
  }
  /// The parameters' types, in parameter order; ends the hash.
  template <class TypeOf>
  uint64_t finish(size_t num_params, TypeOf&& type_of) {
    h_.add(num_params);
    for (size_t p = 0; p < num_params; ++p) h_.add(type_of(p));
    return h_.value();
  }

 private:
  Hasher h_;
};

}  // namespace lt::ir
