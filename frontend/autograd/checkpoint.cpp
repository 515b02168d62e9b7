// checkpoint as a custom autograd function whose backward is a second forward with history and
// a backward of it.
#include "lt/checkpoint.h"

#include <algorithm>

#include "lt/autograd.h"
#include "lt/function.h"
#include "lt/ops.h"

namespace lt {

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
    {
      NoGradGuard no_grad;
      for (size_t i = 0; i < a.inputs.size(); ++i) {
        xs.push_back(a.inputs[i].defined() ? clone(a.inputs[i]) : Tensor());
        if (a.needs_input_grad[i]) xs.back().requires_grad_();
      }
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
    for (size_t k = 0; k < outs.size() && k < a.grad_outputs.size(); ++k)
      if (outs[k].defined() && outs[k].requires_grad()) {
        roots.push_back(outs[k]);
        seeds.push_back(a.grad_outputs[k]);
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
