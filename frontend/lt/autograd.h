// Gradient mode: a scope in which ops record no autograd history (optimizer updates, eval); and
// hooks on leaves' gradients.
#pragma once
#include <functional>
#include <optional>
#include <source_location>
#include <vector>

namespace lt {

class Tensor;

bool grad_enabled();

class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

/// A scope in which ops record history again, inside a NoGradGuard (torch.enable_grad).
class EnableGradGuard {
 public:
  EnableGradGuard();
  ~EnableGradGuard();
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

/// Calls `hook(leaf)` in every backward() that reaches `leaf`, once its gradient for that pass is
/// complete (every contribution accumulated into leaf.grad()), as PyTorch's
/// Tensor.register_post_accumulate_grad_hook. Hooks run in the order the backward pass completes
/// the leaves, which is the same in every process running the same program. `leaf` must be a
/// leaf that requires grad (lt::InputError otherwise). Returns the hook's id.
int register_post_accumulate_grad_hook(const Tensor& leaf, std::function<void(const Tensor&)> hook,
                                       std::source_location loc = std::source_location::current());
/// Removes a hook registered on `leaf`; an unknown id does nothing.
void remove_post_accumulate_grad_hook(const Tensor& leaf, int id);

namespace autograd {

/// The gradients of the outputs with respect to the inputs (torch::autograd::grad): the sum of
/// d outputs[k] / d inputs[i] weighted by grad_outputs[k] (ones for a scalar output when left
/// out), returned instead of accumulated into grad() (no leaf's grad() changes, and no leaf
/// gradient hooks run). An input may be a leaf or an intermediate. With create_graph the pass
/// is itself recorded, so its gradients can be differentiated again (double backward, gradient
/// penalties); retain_graph (by default create_graph) keeps the graph for another pass. An input
/// the outputs do not depend on is an error unless allow_unused, which gives an undefined
/// tensor. PyTorch's messages.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false,
                         std::source_location loc = std::source_location::current());

/// Accumulates the gradients of `tensors` into the leaves' grad() (torch::autograd::backward,
/// Tensor.backward with its arguments): grad_tensors weight them (ones for a scalar when left
/// out); retain_graph (by default create_graph) keeps the graph for another pass; create_graph
/// records the pass, so the accumulated gradients have history and can be differentiated again.
/// With `inputs`, only those tensors (leaves or intermediates) accumulate, into their grad().
/// PyTorch's messages. As PyTorch warns, a gradient with history refers to its own tensor (a
/// reference cycle): set_grad(Tensor()) (or zero_grad with set_to_none) releases both.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const std::vector<Tensor>& inputs = {},
              std::source_location loc = std::source_location::current());

}  // namespace autograd

}  // namespace lt
