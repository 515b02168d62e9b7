// A pending op of lazy mode. Lazy tensors point at (node, output); a node's inputs are other
// pending nodes or device data. When a graph runs, the outputs it computed are kept here so later
// graphs read them as parameters instead of recomputing.
#pragma once
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/recycling_allocator.h"
#include "ir/shape.h"
#include "ir/type_list.h"
#include "runtime/buffer.h"

namespace lt {

struct LazyNode;

struct LazyInput {
  std::shared_ptr<LazyNode> node;      // pending producer, or null
  int index = 0;                       // its output
  std::shared_ptr<rt::Buffer> data;    // device data when node is null
  TensorType type;
};

struct LazyNode {
  ir::Op op;
  ir::Attrs attrs;
  RecycledVector<LazyInput> inputs;
  TypeList types;
  std::vector<std::shared_ptr<rt::Buffer>> results;  // filled for outputs a graph materialized
  std::source_location loc;  // formatted only when a graph is built
  // While debugging, the location formatted as it was traced: a front end's namer
  // (ir/location_namer.h) can name the caller of a fixed `loc` only at that moment.
  std::string loc_text;
  // cut()'s numbering: the node's id in the cut with this serial (a map from node to id cost
  // one heap allocation per node and cut).
  uint64_t cut_serial = 0;
  int cut_id = -1;
  // Creation order (one counter for the process): a cut lists its nodes in it.
  uint64_t trace_serial = 0;
};

}  // namespace lt
