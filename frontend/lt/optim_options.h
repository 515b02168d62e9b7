// The optimizers' options (docs/TRAINING.md, "Optimizers"): one struct per optimizer, whose
// fields() names each option once, with its state_dict key (PyTorch's name) and what its values
// must be. state_dict(), load_state_dict() and the checks at construction and at every step all
// walk that one list (frontend/optim/option_fields.h), so an option is its member and its row.
#pragma once
#include <array>
#include <tuple>

namespace lt::optim {

/// What an option's values must be. A value outside throws lt::Error
/// "<name> must be <what>, got <value>" (an array prints all its values: "0.9,1").
enum class Rule {
  Any,           ///< every value (a switch)
  NonNegative,   ///< >= 0 (not NaN): "must be >= 0"
  Finite,        ///< "must be finite"
  UnitInterval,  ///< each value in [0, 1): "must be in [0, 1)"
};

/// One option of `Options`: its key in state_dict (PyTorch's name), its member and its rule.
/// A member is a double, a bool or an array of doubles (saved as "0.9,0.999").
template <class Options, class T>
struct Field {
  const char* name;
  T Options::*member;
  Rule rule;
  bool required = true;  ///< whether a state_dict must hold it to load

  /// For an option added after checkpoints were written: one without it loads with the default.
  constexpr Field default_when_missing() const {
    Field f = *this;
    f.required = false;
    return f;
  }
};
template <class Options, class T>
constexpr Field<Options, T> field(const char* name, T Options::*member, Rule rule = Rule::Any) {
  return {name, member, rule};
}

/// torch.optim.SGD's options. Nesterov needs momentum > 0 and dampening 0.
struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;  ///< L2 penalty: weight_decay * param is added to the gradient
  bool nesterov = false;

  static constexpr auto fields() {
    using O = SGDOptions;
    return std::tuple{
        field("lr", &O::lr, Rule::NonNegative),
        field("momentum", &O::momentum, Rule::NonNegative),
        field("dampening", &O::dampening, Rule::Finite),
        field("weight_decay", &O::weight_decay, Rule::NonNegative),
        field("nesterov", &O::nesterov),
    };
  }
};

/// The options of Adam and AdamW, which differ in weight_decay's default alone.
template <class O>
constexpr auto adam_fields() {
  return std::tuple{
      field("lr", &O::lr, Rule::NonNegative),
      field("betas", &O::betas, Rule::UnitInterval),
      field("eps", &O::eps, Rule::NonNegative),
      field("weight_decay", &O::weight_decay, Rule::NonNegative),
      field("amsgrad", &O::amsgrad),
  };
}

/// torch.optim.Adam's options.
struct AdamOptions {
  double lr = 1e-3;
  std::array<double, 2> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 0;  ///< L2 penalty: weight_decay * param is added to the gradient
  bool amsgrad = false;

  static constexpr auto fields() { return adam_fields<AdamOptions>(); }
};

/// torch.optim.AdamW's options: the weight decay is decoupled (param *= 1 - lr * weight_decay).
struct AdamWOptions {
  double lr = 1e-3;
  std::array<double, 2> betas{0.9, 0.999};
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;

  static constexpr auto fields() { return adam_fields<AdamWOptions>(); }
};

/// torch.optim.RMSprop's options.
struct RMSpropOptions {
  double lr = 1e-2;
  double alpha = 0.99;  ///< smoothing of the squared-gradient average
  double eps = 1e-8;
  double weight_decay = 0;  ///< L2 penalty: weight_decay * param is added to the gradient
  double momentum = 0;
  bool centered = false;  ///< divide by an estimate of the gradient's variance instead

  static constexpr auto fields() {
    using O = RMSpropOptions;
    return std::tuple{
        field("lr", &O::lr, Rule::NonNegative),
        field("alpha", &O::alpha, Rule::NonNegative),
        field("eps", &O::eps, Rule::NonNegative),
        field("weight_decay", &O::weight_decay, Rule::NonNegative),
        field("momentum", &O::momentum, Rule::NonNegative),
        field("centered", &O::centered),
    };
  }
};

/// torch.optim.Adagrad's options.
struct AdagradOptions {
  double lr = 1e-2;
  double lr_decay = 0;      ///< the rate at update t (from 1) is lr / (1 + (t - 1) * lr_decay)
  double weight_decay = 0;  ///< L2 penalty: weight_decay * param is added to the gradient
  double initial_accumulator_value = 0;  ///< where each parameter's sum of squares starts
  double eps = 1e-10;

  static constexpr auto fields() {
    using O = AdagradOptions;
    return std::tuple{
        field("lr", &O::lr, Rule::NonNegative),
        field("lr_decay", &O::lr_decay, Rule::NonNegative),
        field("weight_decay", &O::weight_decay, Rule::NonNegative),
        field("initial_accumulator_value", &O::initial_accumulator_value, Rule::NonNegative),
        field("eps", &O::eps, Rule::NonNegative),
    };
  }
};

}  // namespace lt::optim
