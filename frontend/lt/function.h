// Custom autograd functions: a differentiable computation written in lt:: ops whose gradient is
// written by hand, as libtorch's torch::autograd::Function. The forward's ops record no history
// of their own; the whole computation is one node of the tape, whose backward is the given one.
// Both halves trace in lazy mode like any other code, so the step graph holds the hand-written
// gradient instead of the one autograd would derive from the forward's ops.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt {

/// What a forward returns: its outputs, and tensors its backward needs besides the function's
/// inputs and outputs (torch's ctx.save_for_backward).
struct FunctionOutputs {
  std::vector<Tensor> outputs;
  std::vector<Tensor> saved;
};

/// What a backward gets. grad_outputs has one gradient per output, zeros where none flowed.
/// needs_input_grad[i] says whether input i wants a gradient; the backward may return an
/// undefined tensor for one that does not.
struct FunctionGradArgs {
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> saved;
  std::span<const Tensor> grad_outputs;
  std::span<const char> needs_input_grad;
};

using FunctionForward = std::function<FunctionOutputs(std::span<const Tensor> inputs)>;
/// Returns one gradient per input, each of its input's shape (or undefined: no gradient).
using FunctionBackward = std::function<std::vector<Tensor>(const FunctionGradArgs&)>;

/// Runs `forward(inputs)` with no history recorded and, where an input requires grad (and grad
/// mode is on), makes its outputs the results of one node whose gradient is `backward`. `name`
/// names the node in errors. The outputs must be new tensors (not inputs, nothing with history
/// of its own): lt::InputError otherwise, as for a backward returning the wrong number of
/// gradients or a gradient of the wrong shape (lt::Error, when backward() runs).
std::vector<Tensor> apply_function(const std::string& name, std::span<const Tensor> inputs,
                                   const FunctionForward& forward, FunctionBackward backward,
                                   Loc loc = Loc::current());

}  // namespace lt
