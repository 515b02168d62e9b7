// torch.optim.SGD (PyTorch 1.13's algorithm), sync-free.
//
// PyTorch's first step sets the momentum buffer to the gradient itself (b = g, no dampening),
// a host branch on "has this parameter a buffer yet". Here the buffer exists from construction
// (zeros) and each parameter carries a 0-d `step` count; the update computes b = buf * m + g * c
// with the 0-d coefficients m = (step == 0 ? 0 : momentum) and c = (step == 0 ? 1 :
// 1 - dampening) selected in the graph. Zeros plus the flag give exactly PyTorch's first buffer
// for any dampening (zero-initialized momentum alone would give (1 - dampening) * g), with no
// sync and the same graph on every step.
#include <fmt/format.h>

#include <optional>

#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

constexpr size_t kBuffer = 0;

}  // namespace

SGD::SGD(std::vector<Tensor> params, SGDOptions options, Loc loc)
    : SGD(std::vector<ParamGroup<SGDOptions>>{{std::move(params), options}}, loc) {}

SGD::SGD(std::vector<ParamGroup<SGDOptions>> groups, Loc loc)
    : OptimizerOf("SGD", std::move(groups), loc) {
  init(loc);
}

void SGD::check_together(const SGDOptions& o) const {
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0))
    throw Error(
        fmt::format("nesterov needs momentum > 0 and dampening 0, got momentum {} and "
                    "dampening {}",
                    o.momentum, o.dampening));
}

std::vector<std::string> SGD::slot_names(size_t group) const {
  if (options_[group].momentum == 0) return {};
  return {"momentum_buffer", "step"};
}

void SGD::update(size_t group, const Tensor& skip) {
  const SGDOptions& o = options_[group];
  const auto s = [&](const char* name, double value, DType dtype) {
    return scalar(group, name, value, dtype);
  };
  // d = grad + weight_decay * p, and p -= lr * (what momentum makes of d).
  const auto decayed_grad = [&](const Tensor& p) {
    const Tensor g = p.grad();
    return o.weight_decay != 0 ? g + p * s("weight_decay", o.weight_decay, p.dtype()) : g;
  };
  const auto descend = [&](Tensor& p, const Tensor& d) {
    assign(p, p - d * s("lr", o.lr, p.dtype()), skip);
  };
  if (o.momentum == 0) {
    for (size_t i = 0; i < params(group).size(); ++i)
      if (Tensor& p = param(group, i); p.grad().defined()) descend(p, decayed_grad(p));
    return;
  }
  for (Cohort& c : cohorts(group)) {
    // The first step's choice is made on 0-d coefficients, which costs nothing per element
    // where a where() over the whole buffer would cost eager mode a pass over memory. The
    // buffer holds +0 then, and +0 * -0 = -0 is the one addend that leaves every d as it is
    // (-0 + d == d, the sign of a zero included), so the first buffer is g bit for bit.
    const Tensor first = eq(c.step, scalar_like(0, c.step));
    struct Coefficients {
      Tensor momentum, m, c;
    };
    std::optional<Coefficients> of_dtype[2];  // f32, f64: the parameters' dtypes
    const auto coefficients = [&](DType dt) -> const Coefficients& {
      std::optional<Coefficients>& k = of_dtype[dt == DType::F64];
      if (!k) {
        k.emplace();
        k->momentum = s("momentum", o.momentum, dt);
        k->m = where(first, s("-0", -0.0, dt), k->momentum);
        if (o.dampening != 0)
          k->c = where(first, s("1", 1, dt), s("1-dampening", 1 - o.dampening, dt));
      }
      return *k;
    };
    for (size_t i : c.params) {
      Tensor& p = param(group, i);
      const Tensor d = decayed_grad(p);
      const Coefficients& k = coefficients(p.dtype());
      Tensor& buf = state(group, i, kBuffer);
      Tensor b = buf * k.m;
      b = o.dampening != 0 ? b + d * k.c : b + d;
      assign(buf, b, skip);
      descend(p, o.nesterov ? d + b * k.momentum : b);
    }
    assign(c.step, c.step + 1.0, skip);
  }
}

}  // namespace lt::optim
