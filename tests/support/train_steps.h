// The training loop the e2e, module, optimizer and replica tests share: per step, zero the
// gradients, the loss, backward, the update, and mark_step in lazy mode; the losses come back
// as floats. What a test checks around the steps (clipping, a gradient all-reduce, a schedule,
// counters) goes in through TrainOptions; a step that is not "optimizer after backward" (a
// hand-written update, an example's own step function) goes in whole.
#pragma once
#include <functional>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/optim.h"

namespace lt::testing {

struct TrainOptions {
  Mode mode = Mode::Eager;
  /// After backward, before the update (optimizer steps only): clipping, an all-reduce of the
  /// gradients.
  std::function<void(int step)> after_backward = nullptr;
  /// After the update, before mark_step: a schedule's step.
  std::function<void(int step)> after_update = nullptr;
  /// After mark_step: counters read per step.
  std::function<void(int step)> after_step = nullptr;
  /// The tensor recorded as the step's loss, given the loss (detached); replicas average theirs
  /// over the ranks. By default the loss itself.
  std::function<Tensor(const Tensor& loss)> recorded_loss = nullptr;
};

/// `steps` steps of a caller's own step function (forward, backward and update; it returns the
/// loss), under o.mode, with o's hooks but after_backward around each. The losses are read
/// after the last step, so reading them syncs nothing inside the steps.
std::vector<float> train_steps(int steps, const std::function<Tensor(int step)>& step,
                               const TrainOptions& o = {});

/// `steps` optimizer steps on loss_at(step): opt.zero_grad(), loss_at(step).backward(),
/// o.after_backward, opt.step(), then as above.
std::vector<float> train_steps(optim::Optimizer& opt, int steps,
                               const std::function<Tensor(int step)>& loss_at,
                               const TrainOptions& o = {});

}  // namespace lt::testing
