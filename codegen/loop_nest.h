// The plan of a loop kernel, before any LLVM: every access of the kernel (a piece of an input's
// index map, a store of an output, a reduction's accumulator) as an affine function of the
// iteration index, with bounds where a pad or concat decides between pieces. The iteration shape
// is collapsed where every access walks two dims as one run, ordered (kept dims, then reduced
// dims; or, when the innermost dim is kept, reduced dims around it) and split into rows for the
// thread pool. codegen/loop_emitter.cpp emits the plan.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "ir/fusion_plan.h"
#include "ir/loop_kernel.h"

namespace lt::codegen {

/// How the kernel's work splits for the thread pool (rt::Launch::rows, row_grain).
struct LoopShape {
  int64_t rows = 1;   // rows the kernel takes (row_begin, row_end) over
  int64_t inner = 1;  // iteration points per row: a row of the innermost dim; a kept index's
                      // reduced elements; or a block of columns times the reduced rows
  int64_t rows_per_outer = 0;  // keep_outer_dim: the rows of each index of iteration dim 0, in
                               // order of that index (0: the rows do not split by it)
};

/// An affine access over the iteration dims: buffer[offset + sum(stride[d] * idx[d])], valid
/// where lo[d] <= idx[d] < hi[d]; a constant (padding) when buffer < 0.
struct Access {
  int buffer = -1;
  double fill = 0;
  int64_t offset = 0;
  Dims stride, lo, hi;
};

/// A value read through an index map: the first piece whose bounds hold.
struct Read {
  DType dtype = DType::F32;
  std::vector<Access> pieces;
};

struct Reduction {
  int node = -1;
  ir::ReduceOp op{};
  std::vector<int> out_buffers;  // the reduction and its aliases that the kernel writes
  Access out;                    // where the output element of an iteration index lies
};

/// The kernel's shape of work.
struct Nest {
  Dims dims;   // collapsed iteration dims
  std::vector<char> reduced;   // per dim
  std::vector<int> par;        // dims decomposed from the row index, outer first
  std::vector<int> seq;        // dims looped inside a row, outer first
  int block_dim = -1;          // >= 0: this (last seq) dim runs in blocks of `block`, one per row
  int64_t block = 0, blocks = 1;
  LoopShape shape;
};

/// The whole plan. Buffers are numbered as the kernel's arguments: group inputs, then outputs.
struct LoopNest {
  std::map<int, ir::LoopRole> role;                // by node id
  std::map<ir::Value, int> input_buffer;           // group input -> argument
  std::map<ir::Value, Read> reads;                 // values read through index maps
  std::vector<std::pair<ir::Value, Access>> stores;  // per-element outputs
  std::vector<Reduction> reductions;
  Nest nest;
  bool outer_kept = false;  // keep_outer_dim and dim 0 (of size > 1) is collapsed dim 0
};

/// Plans the kernel of `grp` (which must pass ir::verify_fusion_plan); `keep_outer_dim` keeps
/// iteration dim 0 from merging with the dims inside it, so that rows split by its index.
LoopNest plan_loop_nest(const ir::Graph& g, const ir::FusionGroup& grp, bool keep_outer_dim);

}  // namespace lt::codegen
