// torch.optim.Adagrad (PyTorch 1.13's algorithm), sync-free.
//
// PyTorch computes the decayed rate lr / (1 + (t - 1) * lr_decay) on the host in double from the
// step count; here t is the 0-d f32 `step` and the rate is computed in the graph in f64, then
// cast to the parameter's dtype, as Adam's bias corrections are. The sum of squares starts at
// initial_accumulator_value, filled in at construction.
#include <optional>

#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

constexpr size_t kSum = 0;

}  // namespace

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions options, Loc loc)
    : Adagrad(std::vector<ParamGroup<AdagradOptions>>{{std::move(params), options}}, loc) {}

Adagrad::Adagrad(std::vector<ParamGroup<AdagradOptions>> groups, Loc loc)
    : OptimizerOf("Adagrad", std::move(groups), loc) {
  init(loc);
  ModeGuard eager(Mode::Eager);  // device data, like the zeros init() made
  for (size_t g = 0; g < num_groups(); ++g) {
    const double v = options_[g].initial_accumulator_value;
    if (v == 0) continue;
    for (size_t i = 0; i < params(g).size(); ++i) {
      const Tensor& p = param(g, i);
      state(g, i, kSum) = full(p.shape(), v, p.dtype());
    }
  }
}

std::vector<std::string> Adagrad::slot_names(size_t) const { return {"sum", "step"}; }

void Adagrad::update(size_t group, const Tensor& skip) {
  const AdagradOptions& o = options_[group];
  const auto s = [&](const char* name, double value, DType dtype) {
    return scalar(group, name, value, dtype);
  };
  for (Cohort& c : cohorts(group)) {
    // clr = lr / (1 + step * lr_decay), step the count before this update.
    const Tensor clr64 = s("lr", o.lr, DType::F64) /
                         (1.0 + cast(c.step, DType::F64) * s("lr_decay", o.lr_decay, DType::F64));
    std::optional<Tensor> clr[2];  // f32, f64: the parameters' dtypes
    for (size_t i : c.params) {
      Tensor& p = param(group, i);
      const DType dt = p.dtype();
      Tensor g = p.grad();
      if (o.weight_decay != 0) g = g + p * s("weight_decay", o.weight_decay, dt);
      Tensor& sum = state(group, i, kSum);
      const Tensor new_sum = sum + g * g;
      std::optional<Tensor>& rate = clr[dt == DType::F64];
      if (!rate) rate = cast(clr64, dt);
      assign(p, p - *rate * g / (sqrt(new_sum) + s("eps", o.eps, dt)), skip);
      assign(sum, new_sum, skip);
    }
    assign(c.step, c.step + 1.0, skip);
  }
}

}  // namespace lt::optim
