// Index maps: how a loop kernel reads a value through a chain of views, as affine pieces over
// its iteration space. Views fold into loads here instead of running as copies.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace lt::ir {

/// One way to read an element at an index `idx` of an index space: where lo[d] <= idx[d] < hi[d]
/// for every dim d, the element is source[offset + sum(stride[d] * idx[d])], or `fill` for a
/// constant piece (padding).
struct ReadPiece {
  Value source;
  bool constant = false;
  double fill = 0;
  int64_t offset = 0;
  Dims stride, lo, hi;
};

/// How a loop kernel reads a value from outside it at each point of an index space (`shape`):
/// the first piece whose bounds hold gives the element. Views fold into the pieces: permute and
/// slice into strides and offsets, expand into zero strides, pad and concat into bounds, reshape
/// where the layout allows it (no bounds on, and contiguous runs across, the dims it regroups).
struct ReadMap {
  Shape shape;
  std::vector<ReadPiece> pieces;
};

/// The map by which a loop kernel reads `v` at iteration shape `iter` (v broadcasts to it). `v`
/// is a value from outside the kernel (`outside(v)`) or a view node whose operands are, through
/// any chain of views. nullopt: the views do not fold (a view of a value the kernel computes, a
/// reshape of a padded or strided layout it cannot express, ...).
std::optional<ReadMap> read_map(const Graph& g, Value v, const Shape& iter,
                                const std::function<bool(Value)>& outside);

}  // namespace lt::ir
