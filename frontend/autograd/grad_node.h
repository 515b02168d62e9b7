// One recorded op on the autograd tape. It keeps detached snapshots of its inputs and outputs
// (buffers are never written in place, so a snapshot stays valid when a tensor is rebound) and
// one edge per input telling where that input's gradient goes.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/recycling_allocator.h"
#include "lt/function.h"
#include "lt/tensor.h"

namespace lt {

struct GradNode;
struct VersionCounter;

/// The hand-written gradient of a custom function (lt/function.h) and what its forward saved.
struct CustomGrad {
  std::string name;
  FunctionBackward backward;
  std::vector<Tensor> saved;  // detached
};

struct GradEdge {
  std::shared_ptr<GradNode> node;    // the producer's node, or null
  int output_nr = 0;                 // which output of that node
  std::shared_ptr<TensorImpl> leaf;  // a leaf that requires grad, or null
  bool active() const { return node || leaf; }
};

/// The version a saved value's tensor had when it was saved; no counter: never checked (the
/// value an in-place op itself replaced, which autograd keeps as PyTorch's original self).
struct SavedVersion {
  std::shared_ptr<VersionCounter> counter;
  uint64_t value = 0;
};

struct GradNode {
  ir::Op op;  // the recorded op; unused where custom is set
  ir::Attrs attrs;
  RecycledVector<Tensor> inputs;   // detached
  RecycledVector<Tensor> outputs;  // detached
  RecycledVector<GradEdge> edges;  // one per input
  RecycledVector<SavedVersion> input_versions, output_versions;
  Loc loc;                      // where the forward op was called
  bool released = false;        // backward() ran through it and freed its snapshots
  std::unique_ptr<CustomGrad> custom{};  // a custom function's node: its gradient instead of op's
  /// Gradient hooks of its outputs (Tensor::register_hook): output, id, hook.
  std::vector<std::tuple<int, int, std::function<Tensor(const Tensor&)>>> output_hooks{};
};

/// What the node is, for messages: its op's mnemonic or its custom function's name.
std::string node_name(const GradNode& n);

/// Makes `outputs` the results of `node` (with an edge to each input's producer or leaf and
/// detached snapshots of both), if any input requires grad; otherwise records nothing.
void record_node(std::shared_ptr<GradNode> node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs);

/// Gradients of op's inputs given its outputs' gradients (undefined = no gradient). Written in
/// lt:: ops, so in lazy mode the backward pass traces like user code.
struct VjpArgs {
  const ir::Attrs& attrs;
  std::span<const Tensor> in;
  std::span<const Tensor> out;
  std::span<const Tensor> gout;  // defined for every output the vjp reads (zeros where nothing
                                 // flowed; see vjp_outputs_read)
  /// Per input: is its gradient wanted? A vjp may return an undefined tensor for an input that
  /// is not (eager mode then skips, e.g., the input-gradient GEMM of a network's first layer;
  /// lazy mode would drop it as dead code anyway). Empty: every input is wanted.
  std::span<const char> needs = {};
  bool need(size_t i) const { return needs.empty() || needs[i]; }
};
std::vector<Tensor> vjp(ir::Op op, const VjpArgs& a);
/// How many of an op's outputs, from the first, its vjp reads the gradients of: all of them but
/// for batch and layer norm, whose statistics feed nothing differentiable. The engine makes
/// zeros only for those (four traced zeros per batch norm otherwise, in every step).
size_t vjp_outputs_read(ir::Op op, size_t outputs);

std::vector<Tensor> vjp_elementwise(ir::ElementwiseOp op, const VjpArgs& a);
std::vector<Tensor> vjp_reduce(ir::ReduceOp op, const VjpArgs& a);
std::vector<Tensor> vjp_view(ir::ViewOp op, const VjpArgs& a);
std::vector<Tensor> vjp_library(ir::LibraryOp op, const VjpArgs& a);
std::vector<Tensor> vjp_nn(ir::NnOp op, const VjpArgs& a);
std::vector<Tensor> vjp_collective(ir::CollectiveOp op, const VjpArgs& a);

/// Runs the backward pass from `root` seeded with `seed`.
void run_backward(const Tensor& root, const Tensor& seed);

}  // namespace lt
