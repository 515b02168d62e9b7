// Activation checkpointing, as torch.utils.checkpoint.checkpoint (its reentrant form): a block
// runs without keeping its intermediates, and backward() runs it again, with autograd on, to
// get its gradients, trading a second forward for the memory of the activations inside.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "lt/tensor.h"

namespace lt {

/// A block: tensors in, tensors out. Parameters it uses (a module's, captured) get their
/// gradients as without checkpointing.
using CheckpointBlock = std::function<std::vector<Tensor>(std::span<const Tensor> inputs)>;

/// Runs block(inputs) keeping no history inside it; where an input requires grad, the outputs
/// get one autograd node whose backward re-runs the block from the saved inputs, with the
/// random generator where it was at the first run (dropout draws the same masks, PyTorch's
/// preserve_rng_state), and differentiates it: the inputs' gradients come back, the parameters'
/// accumulate into their grad(). Where no input requires grad (the first block of a model fed
/// data), checkpointing would lose the parameters' gradients (PyTorch's reentrant checkpoint
/// warns and loses them): the block runs as without it, keeping its activations. Gradients and
/// values are bit for bit those of the block run plainly. The backward runs a backward of its
/// own, so gradient hooks of the parameters fire once for it (as PyTorch's reentrant form).
std::vector<Tensor> checkpoint(const CheckpointBlock& block, std::span<const Tensor> inputs,
                               Loc loc = Loc::current());
Tensor checkpoint(const std::function<Tensor(const Tensor&)>& block, const Tensor& input,
                  Loc loc = Loc::current());

}  // namespace lt
