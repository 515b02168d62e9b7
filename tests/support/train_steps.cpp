#include "tests/support/train_steps.h"

namespace lt::testing {

std::vector<float> train_steps(int steps, const std::function<Tensor(int step)>& step,
                               const TrainOptions& o) {
  std::vector<Tensor> losses;
  {
    ModeGuard guard(o.mode);
    for (int s = 0; s < steps; ++s) {
      const Tensor loss = step(s).detach();
      if (o.after_update) o.after_update(s);
      losses.push_back(o.recorded_loss ? o.recorded_loss(loss) : loss);
      if (o.mode == Mode::Lazy) mark_step();
      if (o.after_step) o.after_step(s);
    }
  }
  std::vector<float> values;
  for (const Tensor& l : losses) values.push_back(l.item<float>());
  return values;
}

std::vector<float> train_steps(optim::Optimizer& opt, int steps,
                               const std::function<Tensor(int step)>& loss_at,
                               const TrainOptions& o) {
  return train_steps(
      steps,
      [&](int s) {
        opt.zero_grad();
        const Tensor loss = loss_at(s);
        loss.backward();
        if (o.after_backward) o.after_backward(s);
        opt.step();
        return loss;
      },
      o);
}

}  // namespace lt::testing
