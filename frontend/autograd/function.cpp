// Custom functions (lt/function.h): the forward runs without history, then one node with the
// hand-written gradient takes its outputs.
#include <fmt/format.h>

#include <algorithm>

#include "frontend/autograd/grad_node.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/autograd.h"
#include "lt/function.h"

namespace lt {

std::vector<Tensor> apply_function(const std::string& name, std::span<const Tensor> inputs,
                                   const FunctionForward& forward, FunctionBackward backward,
                                   Loc loc) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined())
      throw InputError(
          fmt::format("{}: input {} is an undefined tensor at {}", name, i, location_str(loc)));
  const bool record = grad_enabled() && std::any_of(inputs.begin(), inputs.end(),
                                                    [](auto& x) { return x.requires_grad(); });
  FunctionOutputs r;
  {
    NoGradGuard no_history;
    r = forward(inputs);
  }
  if (!record) return std::move(r.outputs);
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Tensor& y = r.outputs[i];
    const auto same = [&](const Tensor& x) { return x.impl() == y.impl(); };
    const bool taken = y.defined() && (y.impl()->requires_grad ||
                                       std::any_of(inputs.begin(), inputs.end(), same) ||
                                       std::any_of(r.outputs.begin(), r.outputs.begin() + i, same));
    if (!y.defined() || taken)
      throw InputError(fmt::format(
          "{}: output {} of the forward is {}; return new tensors made by its ops at {}", name, i,
          y.defined() ? "an input, another output or a tensor with autograd history" : "undefined",
          location_str(loc)));
  }
  auto node = std::make_shared<GradNode>();
  node->loc = loc;
  node->custom = std::make_unique<CustomGrad>(CustomGrad{name, std::move(backward), {}});
  for (const Tensor& s : r.saved) node->custom->saved.push_back(s.defined() ? snapshot(s) : s);
  record_node(std::move(node), inputs, r.outputs);
  return std::move(r.outputs);
}

}  // namespace lt
