// The eager kernels: one entry point for every op in the tables. Eager mode calls it per op; the
// reference interpreter calls it per node. Outputs are preallocated by the caller with the types
// infer_types gave; inputs are contiguous, row-major.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/shape.h"

namespace lt::rt {

/// A tensor argument: contiguous data plus its type (owned by the caller).
struct TensorRef {
  void* data;
  const TensorType* type;

  template <class T>
  T* as() const { return static_cast<T*>(data); }
  const Shape& shape() const { return type->shape; }
  DType dtype() const { return type->dtype; }
  int64_t numel() const { return type->numel(); }
  int64_t rank() const { return type->rank(); }
};

using Ins = std::span<const TensorRef>;
using Outs = std::span<const TensorRef>;

/// A consumer of a library kernel's output, block by block: lazy mode's compiled epilogues
/// (ir::KernelKind::Epilogue). The kernel calls done(begin, end, data) once it has finished
/// elements [begin, end) of out[0], a whole number of blocks of `block_elems` elements, with
/// `data` pointing at element `begin` (and `data` less `begin` elements 64-byte aligned, as
/// out[0].data is, so compiled code may index it by element number). Calls for different blocks
/// may come from several threads at once. When out[0].data is null the kernel keeps each block
/// in scratch of its own that is reused once done() returns (the output is never written
/// whole). Kernels that take one: matmul (block_elems = the whole output; out[0] must be given)
/// and conv2d (one image, or the whole output).
struct OutputBlocks {
  int64_t block_elems = 0;
  std::function<void(int64_t begin, int64_t end, const void* data)> done;
};

/// Runs `op` on the CPU. Throws lt::Error for data-dependent faults (an embedding id out of
/// range); everything shape-related was checked by infer_types before.
void run_kernel(ir::Op op, const ir::Attrs& attrs, Ins in, Outs out);

// Per-family entry points, each in runtime/kernels/<family>.cpp.
void run_elementwise(ir::ElementwiseOp op, const ir::Attrs& attrs, Ins in, Outs out);
void run_reduce(ir::ReduceOp op, const ir::ReduceAttrs& attrs, Ins in, Outs out);
void run_view(ir::ViewOp op, const ir::Attrs& attrs, Ins in, Outs out);
void run_library(ir::LibraryOp op, const ir::Attrs& attrs, Ins in, Outs out,
                 const OutputBlocks* blocks = nullptr);
void run_nn(ir::NnOp op, const ir::Attrs& attrs, Ins in, Outs out);
void run_creation(ir::CreationOp op, const ir::Attrs& attrs, Ins in, Outs out);
void run_collective(ir::CollectiveOp op, const ir::Attrs& attrs, Ins in, Outs out);
/// run_collective in two halves, so that a step computes while the collective is in flight:
/// start_collective copies the operand into the output (unless the buffer plan gave them the
/// same bytes) and starts reducing it there, returning the request; finish_collective(request)
/// returns once the output holds the result.
int start_collective(ir::CollectiveOp op, const ir::Attrs& attrs, Ins in, Outs out);
void finish_collective(int request);
/// Lets collectives in flight advance; false when none is.
bool progress_collectives();

/// Calls f(T{}) with T the C++ type of a compute dtype (bool, int32_t, int64_t, float, double).
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16:
    case DType::BF16: break;
  }
  return f(float{});  // storage-only types never reach compute kernels (infer_types rejects them)
}

/// Like dispatch_dtype, for ops defined on float and double only.
template <class F>
decltype(auto) dispatch_float(DType t, F&& f) {
  if (t == DType::F64) return f(double{});
  return f(float{});
}

}  // namespace lt::rt
