// checkpoint as a custom autograd function whose backward is a second forward with history and
// a backward of it.
#include "lt/checkpoint.h"

#include <algorithm>

#include "lt/autograd.h"
#include "lt/function.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt {
namespace {

/// The saved inputs and the incoming gradients through one optimization barrier (lazy mode): the
/// step graph then recomputes the block from values the compiler cannot identify with the
/// forward's (common-subexpression elimination would merge the copy back and keep every
/// activation alive), and only once the backward pass has reached the block.
void through_barrier(std::vector<Tensor>& inputs, std::vector<Tensor>& grads) {
  std::vector<Tensor*> slots;
  std::vector<Tensor> operands;
  for (auto* list : {&inputs, &grads})
    for (Tensor& t : *list)
      if (t.defined()) {
        slots.push_back(&t);
        operands.push_back(t);
      }
  if (operands.empty()) return;
  const std::vector<Tensor> out = optimization_barrier(operands);
  for (size_t i = 0; i < slots.size(); ++i) *slots[i] = out[i];
}

}  // namespace

std::vector<Tensor> checkpoint(const CheckpointBlock& block, std::span<const Tensor> inputs,
                               Loc loc) {
  const bool record = grad_enabled() && std::any_of(inputs.begin(), inputs.end(), [](auto& x) {
                        return x.defined() && x.requires_grad();
                      });
  if (!record) return block(inputs);
  const RngState rng = rng_state();
  const FunctionForward forward = [&](std::span<const Tensor> in) {
    return FunctionOutputs{block(in), {}};
  };
  const FunctionBackward backward = [block, rng](const FunctionGradArgs& a) {
    std::vector<Tensor> xs;
    std::vector<Tensor> seeds_in(a.grad_outputs.begin(), a.grad_outputs.end());
    {
      NoGradGuard no_grad;
      xs.assign(a.inputs.begin(), a.inputs.end());
      if (mode() == Mode::Lazy) {
        through_barrier(xs, seeds_in);
      } else {
        for (Tensor& x : xs)
          if (x.defined()) x = clone(x);  // fresh leaves for the second run
      }
      for (size_t i = 0; i < xs.size(); ++i)
        if (a.needs_input_grad[i]) xs[i].requires_grad_();
    }
    const RngState now = rng_state();
    set_rng_state(rng);
    std::vector<Tensor> outs;
    {
      EnableGradGuard with_grad;
      outs = block(xs);
    }
    set_rng_state(now);
    std::vector<Tensor> roots, seeds;
    for (size_t k = 0; k < outs.size() && k < seeds_in.size(); ++k)
      if (outs[k].defined() && outs[k].requires_grad()) {
        roots.push_back(outs[k]);
        seeds.push_back(seeds_in[k]);
      }
    if (roots.size() == 1) {
      roots[0].backward(seeds[0]);
    } else if (!roots.empty()) {
      EnableGradGuard with_grad;
      Tensor total;
      for (size_t k = 0; k < roots.size(); ++k) {
        const Tensor term = sum(roots[k] * seeds[k]);
        total = total.defined() ? total + term : term;
      }
      total.backward();
    }
    std::vector<Tensor> grads;
    for (size_t i = 0; i < xs.size(); ++i)
      grads.push_back(a.needs_input_grad[i] ? xs[i].grad() : Tensor());
    return grads;
  };
  return apply_function("checkpoint", inputs, forward, backward, loc);
}

Tensor checkpoint(const std::function<Tensor(const Tensor&)>& block, const Tensor& input,
                  Loc loc) {
  const CheckpointBlock one = [block](std::span<const Tensor> in) {
    return std::vector<Tensor>{block(in[0])};
  };
  return checkpoint(one, {&input, 1}, loc)[0];
}

}  // namespace lt
