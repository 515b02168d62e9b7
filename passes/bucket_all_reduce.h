// Gradient bucketing: the all_reduces of a replica's step, packed into a few large ones, each
// placed right after the last of its operands is computed, so that the runtime can start it
// while the rest of the backward pass runs (see docs/DISTRIBUTED.md, "Buckets").
#pragma once
#include <cstdint>

#include "ir/graph.h"

namespace lt::passes {

struct BucketOptions {
  /// Bytes in the first bucket (the first gradients the backward pass produces). Kept small so
  /// that communication starts early.
  int64_t first_bytes = int64_t{64} << 10;
  /// Bytes in every later bucket; 0 turns bucketing off (one all_reduce per value, unmoved).
  int64_t bytes = int64_t{64} << 10;
};

/// Groups the all_reduce nodes of one reduction and dtype, in the order their operands are
/// computed, into buckets of at most `o.first_bytes` (the first bucket) and `o.bytes` (the
/// others) bytes; a value larger than that is a bucket of its own. A bucket of several values
/// becomes reshape-to-1-D, concat, one all_reduce, and a slice and reshape per value; every
/// bucket moves to just after the node that computes its last operand. Returns true if the
/// graph changed.
bool bucket_all_reduce(ir::Graph& g, const BucketOptions& o);

}  // namespace lt::passes
