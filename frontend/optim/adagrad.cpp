// torch.optim.Adagrad (PyTorch 1.13's algorithm), sync-free.
//
// PyTorch computes the decayed rate lr / (1 + (t - 1) * lr_decay) on the host in double from the
// step count; here t is the 0-d f32 `step` and the rate is computed in the graph in f64, then
// cast to the parameter's dtype, as Adam's bias corrections are. The sum of squares starts at
// initial_accumulator_value, filled in at construction.
#include <fmt/format.h>

#include <optional>

#include "frontend/optim/option_text.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

/// Messages start with the option's name (load_state_dict puts the key's prefix before it).
void check(const AdagradOptions& o) {
  const auto nonneg = [](const char* what, double v) {
    if (!(v >= 0)) throw Error(fmt::format("{} must be >= 0, got {}", what, v));
  };
  nonneg("lr", o.lr);
  nonneg("lr_decay", o.lr_decay);
  nonneg("weight_decay", o.weight_decay);
  nonneg("initial_accumulator_value", o.initial_accumulator_value);
  nonneg("eps", o.eps);
}

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

void Adagrad::check_options(size_t group) const { check(options_[group]); }

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

StringDict Adagrad::options_text(size_t group) const {
  const AdagradOptions& o = options_[group];
  return {{"lr", number_text(o.lr)},
          {"lr_decay", number_text(o.lr_decay)},
          {"weight_decay", number_text(o.weight_decay)},
          {"initial_accumulator_value", number_text(o.initial_accumulator_value)},
          {"eps", number_text(o.eps)}};
}

void Adagrad::set_options_text(size_t group, const StringDict& text) {
  AdagradOptions o;
  o.lr = read_number(text, "lr");
  o.lr_decay = read_number(text, "lr_decay");
  o.weight_decay = read_number(text, "weight_decay");
  o.initial_accumulator_value = read_number(text, "initial_accumulator_value");
  o.eps = read_number(text, "eps");
  check(o);
  options_[group] = o;
}

}  // namespace lt::optim
