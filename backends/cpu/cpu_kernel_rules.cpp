// The CPU's choices of what a loop kernel takes on: of the ops whose loop form (the op table's
// loop column) allows it, those of the dtypes the CPU's loops compute; and the library calls
// (matmul, conv2d) whose output a loop kernel may consume in the same launch.
#include "backends/cpu/cpu_kernel_rules.h"

#include <algorithm>
#include <cstdlib>

namespace lt::backends {
namespace {

using ir::LoopForm;

// On compute dtypes, bf16 and f16 only in the rows whose operand column takes storage types
// (cast), and never an op whose eager kernel checks the data (integer division: a loop kernel
// cannot throw).
bool computes(const ir::Graph& g, int id) {
  const ir::Node& n = g.node(id);
  const DType out = n.types[0].dtype;
  const DType in = n.inputs.empty() ? out : g.type(n.inputs[ir::data_operand(n.op)]).dtype;
  const bool stored = ir::info(n.op).operands == ir::OperandKind::Stored;
  return (stored || (is_compute_type(in) && is_compute_type(out))) && !ir::checks_data(n.op, out);
}

// Of a compute dtype other than bool, reducing at least two elements per output, none empty.
bool loop_reduction(const ir::Graph& g, int id) {
  const ir::Node& n = g.node(id);
  if (ir::info(n.op).loop != LoopForm::Reduction) return false;
  const TensorType& in = g.type(n.inputs[0]);
  if (!is_compute_type(in.dtype) || in.dtype == DType::Bool) return false;
  // Nothing to accumulate when an output has at most one element to reduce (and a kernel that
  // wrote such an output over its donated input would overwrite what it still reads).
  return in.numel() > 0 && n.types[0].numel() > 0 && in.numel() / n.types[0].numel() >= 2;
}

/// Folding a view that walks the innermost iteration dim with a stride past a cache line (a
/// transpose) reads each line once per element: on a large tensor that is several times slower
/// than the eager transpose (blocked) plus a contiguous loop, so such views stay library views
/// there. Small tensors stay in cache and fold.
bool strides_across_lines(const ir::ReadMap& m, size_t elem_bytes) {
  constexpr int64_t kSmall = 32768;  // elements: 128 KB of f32, within L2
  constexpr int64_t kLine = 64;      // bytes
  if (numel(m.shape) <= kSmall) return false;
  size_t d = m.shape.size();
  while (d > 0 && m.shape[d - 1] == 1) --d;
  if (d == 0) return false;
  for (const ir::ReadPiece& p : m.pieces)
    if (!p.constant && std::abs(p.stride[d - 1]) * static_cast<int64_t>(elem_bytes) > kLine)
      return true;
  return false;
}

bool folds_view(const ir::ReadMap& m, size_t elem_bytes) {
  return !strides_across_lines(m, elem_bytes);
}

// Matmul and conv2d, whose eager kernels call an epilogue on each block they finish
// (rt::OutputBlocks), with one float output: bf16 and f16 outputs (autocast) too, whose epilogue
// starts with the cast back to f32.
bool takes_epilogue(const ir::Graph& g, int id) {
  const ir::Node& n = g.node(id);
  return (n.op == ir::Op::MatMul || n.op == ir::Op::Conv2d) && n.types.size() == 1 &&
         is_float(n.types[0].dtype);
}

// Conv2d computes its output image by image; matmul's GEMM finishes it all at once.
bool epilogue_by_image(const ir::Graph& g, int id) { return g.node(id).op == ir::Op::Conv2d; }

// Matmul's output is written whole before its epilogue runs, and so is any library output other
// kernels read or the graph returns; conv2d's otherwise goes image by image into scratch.
bool epilogue_materializes(const ir::Graph& g, const ir::FusionGroup& grp) {
  const int lib = grp.nodes.front();
  if (std::find(grp.outputs.begin(), grp.outputs.end(), ir::Value::node(lib)) != grp.outputs.end())
    return true;
  return !epilogue_by_image(g, lib);
}

constexpr ir::KernelRules kCpuKernelRules{
    .backend = "cpu",
    .computes = computes,
    .loop_reduction = loop_reduction,
    .folds_view = folds_view,
    .takes_epilogue = takes_epilogue,
    .epilogue_by_image = epilogue_by_image,
    .epilogue_materializes = epilogue_materializes,
};

}  // namespace

const ir::KernelRules& cpu_kernel_rules() { return kCpuKernelRules; }

}  // namespace lt::backends
