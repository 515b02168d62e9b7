// Mixed precision's loss scaling, as torch.cuda.amp.GradScaler, but sync-free (docs/TRAINING.md,
// "Loss scaling (GradScaler)").
//
// The scale, the growth tracker and the inf/NaN check are 0-d tensors computed in the graph:
// nothing here reads a tensor value on the host, so a lazy training step with loss scaling,
// skipped steps and scale changes included, is one graph that never syncs and never recompiles.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "lt/optim.h"
#include "lt/serialize.h"
#include "lt/tensor.h"

namespace lt::amp {

/// torch.cuda.amp.GradScaler's options, and `dynamic` (false: the scale never changes).
struct GradScalerOptions {
  double init_scale = 65536;    ///< finite, > 0
  double growth_factor = 2;     ///< finite, > 1
  double backoff_factor = 0.5;  ///< in (0, 1)
  int growth_interval = 2000;   ///< >= 1: finite steps in a row before the scale grows
  bool enabled = true;          ///< false: scale() is the identity, step() a plain step
  bool dynamic = true;
};

/// Scales the loss so that small gradients of low-precision math do not flush to zero, unscales
/// the gradients before the optimizer uses them, and skips every step whose gradients are not
/// all finite (an overflow of the scaled math), backing the scale off; after growth_interval
/// finite steps in a row it grows again. Usage, per step:
///
///   scaler.scale(loss).backward();
///   scaler.unscale_(opt);   // optional: only to look at the true gradients (clipping)
///   scaler.step(opt);       // opt.step(found_inf): a skip decided in the graph
///   scaler.update();
///
/// Every rank of a data-parallel job skips together: the inf check is all-reduced (max).
class GradScaler {
 public:
  using Options = GradScalerOptions;

  /// Throws lt::InputError naming a bad option and its value.
  explicit GradScaler(Options options = {}, Loc loc = Loc::current());
  /// A static scale: never changes, still skips the steps whose gradients are not finite.
  static GradScaler constant(double scale, Loc loc = Loc::current());

  GradScaler(GradScaler&&) noexcept;
  GradScaler& operator=(GradScaler&&) noexcept;
  ~GradScaler();

  /// loss * scale (the scale cast to the loss's float dtype); the loss itself when disabled.
  Tensor scale(const Tensor& loss, Loc loc = Loc::current());
  /// Divides the optimizer's gradients by the scale (times 1/scale, computed in f64 as PyTorch
  /// does) and records whether any of them is inf or NaN. Idempotent until update(); calling it
  /// after step() on the same optimizer is an lt::Error.
  void unscale_(optim::Optimizer& optimizer, Loc loc = Loc::current());
  /// unscale_() if not done yet, then optimizer.step(found_inf): where a gradient was not finite
  /// on any rank, parameters and optimizer state keep their exact values. Once per optimizer
  /// between update()s (an lt::Error otherwise).
  void step(optim::Optimizer& optimizer, Loc loc = Loc::current());
  /// After the step(s): the scale times backoff_factor if any stepped optimizer found an inf or
  /// NaN (the growth tracker reset), else the tracker + 1, and on reaching growth_interval the
  /// scale times growth_factor (kept if that overflows) and the tracker reset. A static scale
  /// stays. An lt::Error when no optimizer was unscaled or stepped since the last update().
  void update(Loc loc = Loc::current());
  /// PyTorch's update(new_scale): the scale set to new_scale, dynamic or static alike; the
  /// growth tracker kept; what unscale_() and step() recorded dropped (none need have run). A
  /// number that is not > 0 and finite in f32 throws lt::InputError naming it.
  void update(double new_scale, Loc loc = Loc::current());
  /// The same with a one-element float tensor that does not require grad (read in the graph, so
  /// not checked); another one throws lt::InputError.
  void update(const Tensor& new_scale, Loc loc = Loc::current());

  /// 1 (a 0-d f32 tensor) where unscale_() found a gradient of `optimizer` that is not finite
  /// (on any rank), so that its step() skips, else 0; always 0 when disabled. From unscale_()
  /// (or step()) until update(), as PyTorch's scaler keeps its found_inf per optimizer; an
  /// lt::Error naming the call site otherwise. A trainer sums it to count its skipped steps.
  Tensor found_inf(const optim::Optimizer& optimizer, Loc loc = Loc::current()) const;
  /// The scale, a 0-d f32 tensor that update() changes in place (read it after mark_step() to
  /// read it for free); a 1 when disabled.
  Tensor get_scale() const;
  /// Finite steps in a row since the scale last changed (0-d i32).
  Tensor growth_tracker() const { return growth_tracker_; }
  const Options& options() const { return options_; }
  bool is_enabled() const { return options_.enabled; }

  /// Tensors `<prefix>.scale` (0-d f32) and `<prefix>.growth_tracker` (0-d i32), and every
  /// option as metadata `<prefix>.<option>`, ready for lt::save next to the model's and the
  /// optimizer's state.
  Checkpoint state_dict(const std::string& prefix = "scaler") const;
  /// Restores the options and both tensors from a state_dict or a whole checkpoint (other keys
  /// are ignored). A missing or bad option or tensor throws lt::Error naming it and changes
  /// nothing. Call it between steps (it drops nothing a step recorded).
  void load_state_dict(const Checkpoint& state, const std::string& prefix = "scaler",
                       Loc loc = Loc::current());

 private:
  enum class Stage { Ready, Unscaled, Stepped };
  struct PerOptimizer {
    Stage stage = Stage::Ready;
    Tensor found_inf;  ///< 0-d f32: 1 where a gradient was not finite (on any rank), else 0
  };
  Options options_;
  Tensor scale_;           // 0-d f32 device data, changed in place by update()
  Tensor growth_tracker_;  // 0-d i32, likewise
  std::unique_ptr<optim::StepScalars> scalars_;                    // the options as device data
  std::map<const optim::Optimizer*, PerOptimizer> per_optimizer_;  // cleared by update()
};

}  // namespace lt::amp
