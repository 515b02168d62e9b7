// torch.optim.Adam and torch.optim.AdamW (PyTorch 1.13's algorithms), sync-free.
//
// PyTorch computes the bias corrections 1 - beta^t on the host in double from the step count;
// here t is a 0-d f32 tensor (PyTorch's dtype for `step`) and the corrections are computed in
// the graph in f64, then cast to the parameter's dtype, as PyTorch's scalar arguments are.
// amsgrad keeps max(max_exp_avg_sq, exp_avg_sq) of the uncorrected averages and divides by its
// square root over sqrt(1 - beta2^t), as PyTorch's implementation does (1.13's formula sheet
// writes the maximum of the corrected values; later releases' sheets match the code).
#include <optional>
#include <type_traits>

#include "lt/ops.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

template <class Options>
constexpr bool kDecoupled = std::is_same_v<Options, AdamWOptions>;

template <class Options>
const char* type_name() {
  return kDecoupled<Options> ? "AdamW" : "Adam";
}

}  // namespace

template <class Options>
AdamFamily<Options>::AdamFamily(std::vector<Tensor> params, Options options, Loc loc)
    : AdamFamily(std::vector<ParamGroup<Options>>{{std::move(params), options}}, loc) {}

template <class Options>
AdamFamily<Options>::AdamFamily(std::vector<ParamGroup<Options>> groups, Loc loc)
    : OptimizerOf<Options>(type_name<Options>(), std::move(groups), loc) {
  this->init(loc);
}

template <class Options>
std::vector<std::string> AdamFamily<Options>::slot_names(size_t group) const {
  if (this->options_[group].amsgrad) return {"exp_avg", "exp_avg_sq", "max_exp_avg_sq", "step"};
  return {"exp_avg", "exp_avg_sq", "step"};
}

template <class Options>
void AdamFamily<Options>::update(size_t group, const Tensor& skip) {
  const Options& o = this->options_[group];
  const auto [beta1, beta2] = o.betas;
  const auto s = [&](const char* name, double value, DType dtype) {
    return this->scalar(group, name, value, dtype);
  };
  for (typename Optimizer::Cohort& c : this->cohorts(group)) {
    const Tensor t = c.step + 1.0;
    const Tensor t64 = cast(t, DType::F64);
    const Tensor bias1 = 1.0 - pow(s("beta1", beta1, DType::F64), t64);
    const Tensor bias2 = 1.0 - pow(s("beta2", beta2, DType::F64), t64);
    struct Corrections {
      Tensor step_size, bias2_sqrt;
    };
    std::optional<Corrections> of_dtype[2];  // f32, f64: the parameters' dtypes
    const auto corrections = [&](DType dt) -> const Corrections& {
      std::optional<Corrections>& k = of_dtype[dt == DType::F64];
      if (!k) k = Corrections{cast(s("lr", o.lr, DType::F64) / bias1, dt), cast(sqrt(bias2), dt)};
      return *k;
    };
    for (size_t i : c.params) {
      Tensor& p = this->param(group, i);
      Tensor g = p.grad();
      const DType dt = p.dtype();
      Tensor& exp_avg = this->state(group, i, 0);
      Tensor& exp_avg_sq = this->state(group, i, 1);
      Tensor decayed = p;
      if (o.weight_decay != 0) {
        if constexpr (kDecoupled<Options>)
          decayed = p * s("1-lr*weight_decay", 1 - o.lr * o.weight_decay, dt);
        else
          g = g + p * s("weight_decay", o.weight_decay, dt);
      }
      const Tensor m = exp_avg * s("beta1", beta1, dt) + g * s("1-beta1", 1 - beta1, dt);
      const Tensor v = exp_avg_sq * s("beta2", beta2, dt) + g * g * s("1-beta2", 1 - beta2, dt);
      const Corrections& k = corrections(dt);
      Tensor v_used = v;
      if (o.amsgrad) {
        Tensor& max_exp_avg_sq = this->state(group, i, 2);
        v_used = maximum(max_exp_avg_sq, v);
        this->assign(max_exp_avg_sq, v_used, skip);
      }
      const Tensor denom = sqrt(v_used) / k.bias2_sqrt + s("eps", o.eps, dt);
      this->assign(p, decayed - k.step_size * (m / denom), skip);
      this->assign(exp_avg, m, skip);
      this->assign(exp_avg_sq, v, skip);
    }
    this->assign(c.step, t, skip);
  }
}

template class AdamFamily<AdamOptions>;
template class AdamFamily<AdamWOptions>;

}  // namespace lt::optim
