// Optimizers, gradient clipping and learning-rate schedules (docs/TRAINING.md, "Optimizers").
//
// Built for lazy mode: step() never reads a tensor value on the host; the learning rate, the step
// count and every other number that may change between steps enter the graph as 0-d tensors, so
// changing them never recompiles; parameters and state are updated in place (their old buffers
// are donated). A whole training step, forward, backward and update, is one graph.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lt/optim_options.h"  // IWYU pragma: export
#include "lt/optim_sched.h"    // IWYU pragma: export
#include "lt/serialize.h"
#include "lt/tensor.h"

namespace lt::optim {

/// Parameters that share options (e.g. no weight decay on biases and norms).
template <class Options>
struct ParamGroup {
  std::vector<Tensor> params;
  Options options;
};

class StepScalars;

/// What every optimizer does. Parameters are handles: updates reach the caller's tensors.
///
/// The state (zeros of each parameter's shape, and a 0-d f32 `step`: the updates a parameter
/// has had, one tensor for the parameters whose counts are equal) is created at construction, so
/// the graph of the first step reads the same parameters as every later one. A parameter with
/// no gradient at step() is left alone, as in PyTorch.
class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// One update of every parameter that has a gradient. `skip`, if given, is a 0-d bool tensor;
  /// where it is true, parameters and state keep their exact values (a `where` in the graph, so
  /// no sync; mixed precision's inf/NaN check feeds it).
  void step(const Tensor& skip = {}, Loc loc = Loc::current());
  /// Drops every parameter's gradient (set_to_none) or sets it to zeros.
  void zero_grad(bool set_to_none = true);

  /// ZeRO's sharded optimizer state (DeepSpeed's stages 1 and 2; stage 1 is what PyTorch's
  /// ZeroRedundancyOptimizer does). Each parameter's flattened elements are cut into
  /// world_size() equal chunks (the last padded with zeros); this rank keeps the state of chunk
  /// rank() only, 1/N of the state. step() updates that chunk of every parameter from the same
  /// chunk of its gradient, then all-gathers the chunks back into each rank's full parameters
  /// (an all_gather per parameter). Stage 1 reads the gradients as they are: average
  /// them over the ranks first, as without sharding (GradientReducer, all_reduce_gradients).
  /// Stage 2 averages them itself, a reduce-scatter per parameter group that gives each rank
  /// its chunks, so the all-reduce is not needed, and step() drops every gradient: each rank
  /// keeps only its shard. The arithmetic is the unsharded optimizer's, element by element.
  /// Once sharded, state_dict() is collective (every rank calls it) and gathers the state into
  /// the unsharded layout, so a checkpoint resumes with or without sharding at any world size;
  /// load_state_dict() takes that layout and keeps this rank's chunks. Collective: every rank
  /// calls it, once, with the same parameters. Throws lt::Error for a stage other than 1 or 2,
  /// or when the state is sharded already.
  void shard_state(int stage, Loc loc = Loc::current());
  /// The ZeRO stage (0: not sharded).
  int zero_stage() const { return zero_stage_; }
  /// Bytes of optimizer state this rank holds (a tensor shared by several slots counted once).
  int64_t state_bytes() const;

  size_t num_groups() const { return params_.size(); }
  const std::vector<Tensor>& params(size_t group) const;
  /// A group's learning rate; schedules set it before each step (it enters the graph as data).
  virtual double lr(size_t group) const = 0;
  virtual void set_lr(size_t group, double lr) = 0;

  /// Tensors `<prefix>.<group>.<param index>.<slot>` (slots: SGD `momentum_buffer`, `step`;
  /// Adam/AdamW `exp_avg`, `exp_avg_sq`, `max_exp_avg_sq` with amsgrad, `step`; RMSprop
  /// `square_avg`, `momentum_buffer` with momentum, `grad_avg` when centered, `step`; Adagrad
  /// `sum`, `step`), and metadata `<prefix>.type`, `<prefix>.groups`, `<prefix>.<group>.params`
  /// and `<prefix>.<group>.<option>` (lr, momentum, betas "0.9,0.999", amsgrad "true"...),
  /// numbers written so they read back exactly. Ready for lt::save next to the model's tensors.
  Checkpoint state_dict(const std::string& prefix = "optim") const;
  /// Restores options and state from a state_dict or a whole checkpoint (keys that do not start
  /// with `<prefix>.` are ignored). Any mismatch (type, group or parameter count, a bad option,
  /// a missing, unexpected or misshapen tensor) throws lt::Error naming it, and nothing changes.
  void load_state_dict(const Checkpoint& state, const std::string& prefix = "optim",
                       Loc loc = Loc::current());

 protected:
  Optimizer(std::string type, std::vector<std::vector<Tensor>> groups, const Loc& loc);

  /// The state slots of a group's parameters under its options, in a fixed order. Options may
  /// change between steps (momentum turned on): step() then adds the new slots as zeros and
  /// drops the ones no longer used before update() runs.
  virtual std::vector<std::string> slot_names(size_t group) const = 0;
  /// Throws lt::Error, its message starting with the option's name, when a group's options are
  /// invalid (checked at construction and at every step, since options() can change them).
  virtual void check_options(size_t group) const = 0;
  /// Updates one group; `skip` may be undefined.
  virtual void update(size_t group, const Tensor& skip) = 0;
  /// A group's options as strings, and back (bad text or values throw lt::Error and change
  /// nothing). OptimizerOf makes these three from its options' fields().
  virtual StringDict options_text(size_t group) const = 0;
  virtual void set_options_text(size_t group, const StringDict& text) = 0;

  /// Checks every group's options and creates the state (derived constructors call it last).
  void init(const Loc& loc);
  /// `group`, or lt::Error when there is no such group.
  size_t checked(size_t group) const;
  /// Parameter `index` of `group`, and its state tensor `slot` (an index into slot_names).
  Tensor& param(size_t group, size_t index) { return params_[group][index]; }
  Tensor& state(size_t group, size_t index, size_t slot) { return state_[group][index][slot]; }
  /// A number of a group's options (or made from them) as a 0-d tensor of device data, a graph
  /// parameter however it changes; `name` identifies it (frontend/optim/step_scalars.h).
  Tensor scalar(size_t group, const std::string& name, double value, DType dtype);
  /// target = value, or where(skip, target, value) when skip is defined: in place either way.
  static void assign(Tensor& target, const Tensor& value, const Tensor& skip);

  /// Parameters of a group that hold one `step` tensor and have a gradient now.
  struct Cohort {
    Tensor step;                 ///< the shared count: assign() to it updates every member's
    std::vector<size_t> params;  ///< indices into params(group), in order
  };
  /// The group's parameters that have a gradient, split by the `step` tensor (the state slot
  /// of that name) they share. Parameters whose updates have always come together hold one
  /// count (a group starts that way), so its increment and what is computed from it (SGD's
  /// first-step coefficients, Adam's bias corrections) are traced once per cohort instead of
  /// once per parameter. A parameter without a gradient gets its own handle to the current
  /// count first, which keeps its value while the cohort's advances.
  std::vector<Cohort> cohorts(size_t group);

 private:
  void check_group(size_t group, const std::string& where, const Loc& loc) const;
  /// Zeros for every slot of every parameter; a group's parameters share one `step` tensor
  /// unless `share_steps` is false (loading gives each its own value).
  void init_state(bool share_steps = true);
  /// After a load: parameters of a group whose loaded counts are equal share one again.
  void share_equal_steps();
  /// The state in the unsharded layout, as this rank holds it (state_dict without gathering).
  Checkpoint local_state_dict(const std::string& prefix) const;
  /// Replaces every full state tensor (all but `step`) by this rank's chunk of it.
  void keep_own_chunks();
  /// step()'s update of a sharded group: on the chunks, then the chunks all-gathered.
  void sharded_update(size_t group, const Tensor& skip);
  /// The index of a group's `step` slot, or -1 when its options keep no count.
  int step_slot(size_t group) const;
  /// Brings a group's slots in line with slot_names(group), keeping the values of those that stay.
  void refresh_slots(size_t group);

  std::string type_;
  std::vector<std::vector<Tensor>> params_;
  std::vector<std::vector<std::string>> slot_names_;     // [group][slot]: what state_ holds
  std::vector<std::vector<std::vector<Tensor>>> state_;  // [group][param][slot]
  std::unique_ptr<StepScalars> scalars_;
  int zero_stage_ = 0;
};

/// An optimizer whose groups carry options of type `Options` (which has an `lr`, and fields():
/// lt/optim_options.h). The options' checks and their text in state_dict come from fields().
template <class Options>
class OptimizerOf : public Optimizer {
 public:
  Options& options(size_t group) { return options_[checked(group)]; }
  const Options& options(size_t group) const { return options_[checked(group)]; }
  double lr(size_t group) const override { return options(group).lr; }
  void set_lr(size_t group, double lr) override { options(group).lr = lr; }

 protected:
  OptimizerOf(std::string type, std::vector<ParamGroup<Options>> groups, const Loc& loc)
      : Optimizer(std::move(type), params_of(groups), loc) {
    for (ParamGroup<Options>& g : groups) options_.push_back(g.options);
  }

  /// Rules that tie options together (SGD's nesterov); each option's own rule is in fields().
  /// Throws lt::Error, its message starting with an option's name.
  virtual void check_together(const Options&) const {}

  std::vector<Options> options_;

 private:
  // frontend/optim/options_of.cpp
  void check(const Options& o) const;
  void check_options(size_t group) const final;
  StringDict options_text(size_t group) const final;
  void set_options_text(size_t group, const StringDict& text) final;

  static std::vector<std::vector<Tensor>> params_of(std::vector<ParamGroup<Options>>& groups) {
    std::vector<std::vector<Tensor>> out;
    for (ParamGroup<Options>& g : groups) out.push_back(std::move(g.params));
    return out;
  }
};
extern template class OptimizerOf<SGDOptions>;
extern template class OptimizerOf<AdamOptions>;
extern template class OptimizerOf<AdamWOptions>;
extern template class OptimizerOf<RMSpropOptions>;
extern template class OptimizerOf<AdagradOptions>;

/// Stochastic gradient descent with momentum, as torch.optim.SGD: with g = grad + wd * p,
/// b = g on a parameter's first step, else momentum * b + (1 - dampening) * g; then
/// p -= lr * (nesterov ? g + momentum * b : b). Without momentum, p -= lr * g (no state).
class SGD final : public OptimizerOf<SGDOptions> {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options = {}, Loc loc = Loc::current());
  explicit SGD(std::vector<ParamGroup<SGDOptions>> groups, Loc loc = Loc::current());

 private:
  std::vector<std::string> slot_names(size_t group) const override;
  void check_together(const SGDOptions& o) const override;
  void update(size_t group, const Tensor& skip) override;
};

/// Adam and AdamW (frontend/optim/adam.cpp), told apart by their options type.
template <class Options>
class AdamFamily : public OptimizerOf<Options> {
 public:
  AdamFamily(std::vector<Tensor> params, Options options = {}, Loc loc = Loc::current());
  explicit AdamFamily(std::vector<ParamGroup<Options>> groups, Loc loc = Loc::current());

 private:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, const Tensor& skip) override;
};

/// Adam, as torch.optim.Adam: weight decay as L2 (added to the gradient); amsgrad keeps the
/// running maximum of exp_avg_sq and divides by its bias-corrected square root.
class Adam final : public AdamFamily<AdamOptions> {
 public:
  using AdamFamily::AdamFamily;
};

/// AdamW, as torch.optim.AdamW: p *= 1 - lr * weight_decay, then Adam's update without L2.
class AdamW final : public AdamFamily<AdamWOptions> {
 public:
  using AdamFamily::AdamFamily;
};

/// RMSprop, as torch.optim.RMSprop: with g = grad + wd * p, square_avg = alpha * square_avg +
/// (1 - alpha) * g^2; centered also keeps grad_avg = alpha * grad_avg + (1 - alpha) * g and
/// takes avg = sqrt(square_avg - grad_avg^2) + eps, else avg = sqrt(square_avg) + eps; then
/// with momentum buf = momentum * buf + g / avg and p -= lr * buf, without p -= lr * g / avg.
class RMSprop final : public OptimizerOf<RMSpropOptions> {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions options = {}, Loc loc = Loc::current());
  explicit RMSprop(std::vector<ParamGroup<RMSpropOptions>> groups, Loc loc = Loc::current());

 private:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, const Tensor& skip) override;
};

/// Adagrad, as torch.optim.Adagrad: with g = grad + wd * p, sum += g^2 and
/// p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps), t the parameter's update count.
class Adagrad final : public OptimizerOf<AdagradOptions> {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions options = {}, Loc loc = Loc::current());
  explicit Adagrad(std::vector<ParamGroup<AdagradOptions>> groups, Loc loc = Loc::current());

 private:
  std::vector<std::string> slot_names(size_t group) const override;
  void update(size_t group, const Tensor& skip) override;
};

/// torch.nn.utils.clip_grad_norm_: total = the norm_type-norm of the per-gradient norms (the
/// max for infinity); every gradient is multiplied by min(max_norm / (total + 1e-6), 1). Returns
/// total as a 0-d tensor: computed and applied in the graph, no sync. Parameters without a
/// gradient are skipped; with none at all the result is 0.
Tensor clip_grad_norm_(const std::vector<Tensor>& params, double max_norm, double norm_type = 2,
                       Loc loc = Loc::current());

/// torch.nn.utils.clip_grad_value_: every gradient clamped to [-clip_value, clip_value], in
/// place (a NaN stays NaN); in the graph, no sync. Parameters without a gradient are skipped.
void clip_grad_value_(const std::vector<Tensor>& params, double clip_value,
                      Loc loc = Loc::current());

}  // namespace lt::optim
