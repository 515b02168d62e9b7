// Custom autograd functions written in Python (torch.autograd.Function) over lt::apply_function:
// the forward runs at once, under the GIL; the backward runs inside a backward pass, which has
// released the GIL, and takes it back.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lt/function.h"
#include "python/src/bind.h"

namespace lt::py {

namespace {

using Tensors = std::vector<Tensor>;

Tensors vec(std::span<const Tensor> s) { return Tensors(s.begin(), s.end()); }

/// A Python callable the tape keeps: released under the GIL, wherever the tape drops it.
std::shared_ptr<pb::function> held(pb::function f) {
  return std::shared_ptr<pb::function>(new pb::function(std::move(f)), [](pb::function* p) {
    if (!Py_IsInitialized()) return;  // the interpreter is gone: nothing to release
    pb::gil_scoped_acquire gil;
    delete p;
  });
}

}  // namespace

void bind_function(pb::module_& m) {
  const Loc& at = call_site();
  // forward(inputs) -> (outputs, saved); backward(inputs, outputs, saved, grad_outputs,
  // needs_input_grad) -> one gradient or None per input.
  m.def("apply_function", [at](const std::string& name, const Tensors& inputs,
                               pb::function forward, pb::function backward) {
    const FunctionForward fwd = [&forward](std::span<const Tensor> in) {
      const pb::tuple r = forward(vec(in));
      return FunctionOutputs{r[0].cast<Tensors>(), r[1].cast<Tensors>()};
    };
    FunctionBackward bwd = [fn = held(std::move(backward))](const FunctionGradArgs& a) {
      pb::gil_scoped_acquire gil;
      const std::vector<bool> needs(a.needs_input_grad.begin(), a.needs_input_grad.end());
      const pb::object r =
          (*fn)(vec(a.inputs), vec(a.outputs), vec(a.saved), vec(a.grad_outputs), needs);
      Tensors out;
      for (const std::optional<Tensor>& g : r.cast<std::vector<std::optional<Tensor>>>())
        out.push_back(g ? *g : Tensor());
      return out;
    };
    return apply_function(name, inputs, fwd, std::move(bwd), at);
  });
}

}  // namespace lt::py
