// The `step` counts of parameters updated together are one tensor: its increment, SGD's
// first-step coefficients and Adam's bias corrections are traced once per group, a parameter
// without a gradient keeps its own count, and loading shares equal counts again. The reference
// is one optimizer per parameter (each with a count of its own), compared bit for bit.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

using Make = std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>;

const Make sgd = [](std::vector<Tensor> p) {
  return std::make_unique<SGD>(std::move(p), SGDOptions{.lr = 0.1, .momentum = 0.9,
                                                        .dampening = 0.25});
};
const Make adamw = [](std::vector<Tensor> p) {
  return std::make_unique<AdamW>(std::move(p), AdamWOptions{.lr = 0.01, .amsgrad = true});
};

std::vector<Tensor> make_params(int n) {
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i)
    out.push_back(from_vector<float>({0.5f + i, -1.25f, 2.0f * i}, {3}).requires_grad_());
  return out;
}

/// A gradient that differs by parameter and step.
Tensor grad_of(int param, int step) {
  const float k = 1.0f + 0.5f * static_cast<float>(param) - 0.3f * static_cast<float>(step);
  return from_vector<float>({k, -2 * k, 0.25f * k}, {3});
}

/// The ops step() number `at` (from 0) of an optimizer over `n` parameters traces.
int64_t traced_per_step(const Make& make, int n, int at = 0) {
  std::vector<Tensor> params = make_params(n);
  std::unique_ptr<Optimizer> opt = make(params);
  ModeGuard lazy(Mode::Lazy);
  for (int t = 0; t <= at; ++t) {
    for (int i = 0; i < n; ++i) params[i].set_grad(grad_of(i, t));
    mark_step();
    metrics::reset();
    opt->step();
    mark_step();
  }
  return metrics::counter("nodes_traced");
}

TEST(StepCounts, TheCountsMathIsTracedOncePerGroup) {
  // Per parameter SGD traces the buffer's b * m + d * c and p - d * lr (5 ops), Adam its two
  // moments, the step and the amsgrad maximum; the count's increment and what comes of it
  // (the first-step choice, the bias corrections) do not grow with the parameters.
  const int64_t sgd2 = traced_per_step(sgd, 2), sgd6 = traced_per_step(sgd, 6);
  EXPECT_EQ(sgd6 - sgd2, 4 * 5);
  const int64_t adam2 = traced_per_step(adamw, 2), adam6 = traced_per_step(adamw, 6);
  EXPECT_EQ(adam6 - adam2, 4 * 15);
}

TEST(StepCounts, LaterStepsStillTraceTheCountOnce) {
  // The count is shared through every step, not only the first: a step that ran in a compiled
  // graph leaves its members holding one tensor still.
  for (const Make& make : {sgd, adamw}) {
    const int64_t first = traced_per_step(make, 6);
    EXPECT_EQ(traced_per_step(make, 6, 1), first);
    EXPECT_EQ(traced_per_step(make, 6, 2), first);
  }
}

/// Which parameters have a gradient at `step`: all, except parameter 1 at step 1 and
/// parameter 2 at steps 3 and 4 (so the group splits twice).
bool has_grad(int param, int step) {
  return !(param == 1 && step == 1) && !(param == 2 && (step == 3 || step == 4));
}

/// Runs `steps` steps of one optimizer over three parameters and of three optimizers over one
/// each, and compares every parameter and state tensor bit for bit.
void expect_counts_per_parameter(const Make& make, Mode mode, int steps) {
  std::vector<Tensor> together = make_params(3), alone = make_params(3);
  std::unique_ptr<Optimizer> opt = make(together);
  std::vector<std::unique_ptr<Optimizer>> refs;
  for (const Tensor& p : alone) refs.push_back(make({p}));
  ModeGuard guard(mode);
  for (int t = 0; t < steps; ++t) {
    for (int i = 0; i < 3; ++i) {
      for (Tensor* p : {&together[i], &alone[i]}) {
        if (has_grad(i, t)) p->set_grad(grad_of(i, t));
        else p->zero_grad();
      }
    }
    opt->step();
    for (int i = 0; i < 3; ++i)
      if (has_grad(i, t)) refs[i]->step();
    if (mode == Mode::Lazy) mark_step();
  }
  const TensorDict state = opt->state_dict().tensors;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(together[i].to_vector<float>(), alone[i].to_vector<float>()) << "param " << i;
    for (const auto& [name, ref] : refs[i]->state_dict().tensors) {
      const std::string key = "optim.0." + std::to_string(i) + name.substr(name.rfind('.'));
      EXPECT_EQ(state.at(key).to_vector<float>(), ref.to_vector<float>()) << key;
    }
  }
  EXPECT_EQ(state.at("optim.0.0.step").item<float>(), static_cast<float>(steps));
  EXPECT_EQ(state.at("optim.0.1.step").item<float>(), static_cast<float>(steps - 1));
  EXPECT_EQ(state.at("optim.0.2.step").item<float>(), static_cast<float>(steps - 2));
}

class StepCountsIn : public ::testing::TestWithParam<Mode> {};

TEST_P(StepCountsIn, AParameterWithoutAGradientKeepsItsOwnCountSGD) {
  expect_counts_per_parameter(sgd, GetParam(), 6);
}
TEST_P(StepCountsIn, AParameterWithoutAGradientKeepsItsOwnCountAdamW) {
  expect_counts_per_parameter(adamw, GetParam(), 6);
}

TEST_P(StepCountsIn, LoadingSharesEqualCountsAgain) {
  // Counts 4, 3, 4 after four steps: a loaded optimizer traces what the original does (its
  // parameters 0 and 2 share a count again) and continues it bit for bit.
  const Mode mode = GetParam();
  std::vector<Tensor> first = make_params(3);
  std::unique_ptr<Optimizer> opt = adamw(first);
  const auto run = [&](Optimizer& o, std::vector<Tensor>& params, int from, int to) {
    ModeGuard guard(mode);
    for (int t = from; t < to; ++t) {
      for (int i = 0; i < 3; ++i) {
        if (i != 1 || t != 1) params[i].set_grad(grad_of(i, t));
        else params[i].zero_grad();
      }
      o.step();
      if (mode == Mode::Lazy) mark_step();
    }
  };
  run(*opt, first, 0, 4);
  std::vector<Tensor> second = make_params(3);
  for (int i = 0; i < 3; ++i) {
    NoGradGuard no_grad;
    second[i].copy_(first[i]);
  }
  std::unique_ptr<Optimizer> loaded = adamw(second);
  loaded->load_state_dict(opt->state_dict());
  metrics::reset();
  run(*opt, first, 4, 5);
  const int64_t traced = metrics::counter("nodes_traced");
  metrics::reset();
  run(*loaded, second, 4, 5);
  if (mode == Mode::Lazy) {
    EXPECT_EQ(metrics::counter("nodes_traced"), traced);
  }
  const TensorDict a = opt->state_dict().tensors, b = loaded->state_dict().tensors;
  for (const auto& [name, t] : a) EXPECT_EQ(b.at(name).to_vector<float>(), t.to_vector<float>());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(second[i].to_vector<float>(), first[i].to_vector<float>());
  EXPECT_EQ(b.at("optim.0.1.step").item<float>(), 4.0f);
}

INSTANTIATE_TEST_SUITE_P(Modes, StepCountsIn, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return std::string(info.param == Mode::Eager ? "Eager" : "Lazy");
                         });

}  // namespace
}  // namespace lt::optim
