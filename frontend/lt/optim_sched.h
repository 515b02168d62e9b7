// Learning-rate schedules (included by lt/optim.h). A Schedule is a factor of the base learning
// rate as a function of a step count t = 0, 1, 2, ...; a Scheduler applies one to an optimizer,
// stepped once per optimizer step or once per epoch, as the caller chooses. The learning rate
// reaches the graph as data, so a run over a schedule compiles its step once.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lt/serialize.h"
#include "lt/tensor.h"

namespace lt::optim {
class Optimizer;
}

namespace lt::optim::sched {

/// lr(t) = base_lr * factor(t). The subclasses only construct: they are Schedules by value.
class Schedule {
 public:
  Schedule(std::function<double(int64_t)> factor, std::string kind);
  double factor(int64_t t) const { return factor_(t); }
  /// The kind and its settings, e.g. "cosine(t_max=100,lrf=0.01)": a checkpoint records it and
  /// loading checks it.
  const std::string& kind() const { return kind_; }

 private:
  std::function<double(int64_t)> factor_;
  std::string kind_;
};

/// gamma^floor(t / step_size) (torch's StepLR).
struct StepLR : Schedule {
  explicit StepLR(int64_t step_size, double gamma = 0.1);
};

/// gamma^(number of milestones <= t) (torch's MultiStepLR; a repeated milestone counts twice).
struct MultiStepLR : Schedule {
  explicit MultiStepLR(std::vector<int64_t> milestones, double gamma = 0.1);
};

/// gamma^t (torch's ExponentialLR).
struct ExponentialLR : Schedule {
  explicit ExponentialLR(double gamma);
};

/// Half a cosine from 1 at t = 0 down to the floor lrf at t = t_max, then lrf: torch's
/// CosineAnnealingLR with eta_min = lrf * base_lr, held at the floor instead of rising again.
/// A run of N scheduler steps ends at the floor with t_max = N - 1.
struct CosineAnnealingLR : Schedule {
  explicit CosineAnnealingLR(int64_t t_max, double lrf = 0);
};

/// Any factor function; `name` stands for it in checkpoints (no code is saved).
struct LambdaLR : Schedule {
  explicit LambdaLR(std::function<double(int64_t)> factor, std::string name = "lambda");
};

/// start_factor + (1 - start_factor) * t / steps for t < steps, then `then` from its own t = 0:
/// a linear warmup followed by any schedule (a constant 1 when none is given).
struct LinearWarmup : Schedule {
  explicit LinearWarmup(int64_t steps, double start_factor = 0);
  LinearWarmup(int64_t steps, const Schedule& then, double start_factor = 0);
};

/// Drives an optimizer's learning rates: each group's lr is base_lr * factor(t), where base_lr is
/// the group's lr when the scheduler was made.
class Scheduler {
 public:
  /// Takes the groups' base rates and sets the rates of t = 0.
  Scheduler(Optimizer& optimizer, Schedule schedule);

  /// Moves to t + 1 and sets every group's lr. Call it after each optimizer step, or after each
  /// epoch, for a schedule in steps or in epochs.
  void step();
  /// The current t (0 until the first step()).
  int64_t last_step() const { return t_; }
  /// The lr it set for `group` at the current t.
  double lr(size_t group = 0) const;
  const Schedule& schedule() const { return schedule_; }

  /// `<prefix>.kind`, `<prefix>.last_step` and `<prefix>.base_lrs` (comma-separated), for a
  /// checkpoint's metadata.
  StringDict state_dict(const std::string& prefix = "sched") const;
  /// Restores t and the base rates and sets the optimizer's rates for t; a different kind, a
  /// missing key or bad text throws lt::Error (and nothing changes).
  void load_state_dict(const StringDict& state, const std::string& prefix = "sched",
                       Loc loc = Loc::current());

 private:
  void apply();

  Optimizer* optimizer_;
  Schedule schedule_;
  std::vector<double> base_lrs_;
  int64_t t_ = 0;
};

/// torch.optim.lr_scheduler.ReduceLROnPlateau's options. min_lrs: one floor for every group
/// (one value) or one per group; empty: 0.
struct PlateauOptions {
  enum class Mode { Min, Max };
  enum class Threshold { Rel, Abs };
  Mode mode = Mode::Min;  ///< Min: lower metrics are better (a loss); Max: higher (accuracy)
  double factor = 0.1;    ///< each reduction multiplies the rates by it (< 1)
  int64_t patience = 10;  ///< bad epochs tolerated before a reduction
  double threshold = 1e-4;
  Threshold threshold_mode = Threshold::Rel;  ///< Rel: better than best * (1 -+ threshold)
  int64_t cooldown = 0;  ///< epochs after a reduction in which bad epochs are not counted
  std::vector<double> min_lrs = {};
  double eps = 1e-8;  ///< a reduction smaller than this is not applied
};

/// Reduces an optimizer's learning rates when a metric has stopped improving, as
/// torch.optim.lr_scheduler.ReduceLROnPlateau: step(metric) once per epoch (its decision reads
/// the metric on the host, so a tensor metric is a value read there, once per epoch; the
/// training steps themselves stay sync-free). The rates it sets are the optimizer's, saved with
/// its state_dict; this object's own state (best, counters) has state_dict() of its own.
class ReduceLROnPlateau {
 public:
  ReduceLROnPlateau(Optimizer& optimizer, PlateauOptions options = {}, Loc loc = Loc::current());

  /// One epoch's metric; a NaN metric is never better, as in PyTorch.
  void step(double metric);
  /// The same for a one-element tensor, read on the host (a sync in lazy mode).
  void step(const Tensor& metric, Loc loc = Loc::current());

  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t last_epoch() const { return last_epoch_; }

  /// `<prefix>.best`, `.num_bad_epochs`, `.cooldown_counter` and `.last_epoch`, numbers that
  /// read back exactly, for a checkpoint's metadata.
  StringDict state_dict(const std::string& prefix = "plateau") const;
  /// Restores them; a missing key or bad text throws lt::Error (and nothing changes).
  void load_state_dict(const StringDict& state, const std::string& prefix = "plateau",
                       Loc loc = Loc::current());

 private:
  bool is_better(double metric) const;

  Optimizer* optimizer_;
  PlateauOptions options_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
};

}  // namespace lt::optim::sched
