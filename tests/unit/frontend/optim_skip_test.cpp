// step(skip): a true skip leaves every parameter and state tensor bit-identical, decided in the
// graph (no sync), in eager and lazy mode; a false skip is exactly step().
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

struct Model {
  Tensor w = from_vector<float>({0.5, -0.25, 1, 2, -1, 0.75}, {3, 2}).requires_grad_();
  Tensor b = from_vector<float>({0.1, -0.2}, {2}).requires_grad_();
  Tensor x = from_vector<float>({1, 2, 3, -1, 0.5, 2, 0, 1, -2}, {3, 3});
  std::unique_ptr<Optimizer> opt;

  explicit Model(const Make& make) : opt(make({w, b})) {}

  /// Gradients of a small loss that changes with `k`.
  void backward(int k) {
    opt->zero_grad();
    const Tensor y = matmul(x, w) + b;
    sum(tanh(y * (1.0 + 0.1 * k))).backward();
  }
  /// Every parameter and state tensor's values, by name.
  std::map<std::string, std::vector<float>> values() const {
    std::map<std::string, std::vector<float>> out;
    for (const auto& [name, t] : opt->state_dict().tensors) out[name] = t.to_vector<float>();
    out["w"] = w.to_vector<float>();
    out["b"] = b.to_vector<float>();
    return out;
  }
};

/// Two ordinary steps, so that every state tensor holds something.
void warm_up(Model& m, Mode mode) {
  ModeGuard guard(mode);
  for (int k = 0; k < 2; ++k) {
    m.backward(k);
    m.opt->step();
    if (mode == Mode::Lazy) mark_step();
  }
}

void expect_skip_keeps_everything(const Make& make, Mode mode) {
  Model m(make);
  warm_up(m, mode);
  const auto before = m.values();
  const Tensor skip = from_vector<bool>({true}, {});
  metrics::reset();
  {
    ModeGuard guard(mode);
    m.backward(5);
    m.opt->step(skip);
    if (mode == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(m.values(), before);  // bit-identical: float vectors compared with ==
}

void expect_false_skip_is_step(const Make& make, Mode mode) {
  Model a(make), b(make);
  warm_up(a, mode);
  warm_up(b, mode);
  {
    ModeGuard guard(mode);
    a.backward(3);
    a.opt->step(from_vector<bool>({false}, {}));
    b.backward(3);
    b.opt->step();
    if (mode == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(a.values(), b.values());
  EXPECT_NE(a.values().at("w"), Model(make).values().at("w"));  // it did move
}

std::unique_ptr<Optimizer> sgd(std::vector<Tensor> p) {
  return std::make_unique<SGD>(
      std::move(p), SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.1, .nesterov = true});
}
std::unique_ptr<Optimizer> adam(std::vector<Tensor> p) {
  return std::make_unique<Adam>(std::move(p),
                                AdamOptions{.lr = 0.1, .weight_decay = 0.1, .amsgrad = true});
}
std::unique_ptr<Optimizer> adamw(std::vector<Tensor> p) {
  return std::make_unique<AdamW>(std::move(p), AdamWOptions{.lr = 0.1, .amsgrad = true});
}

std::unique_ptr<Optimizer> rmsprop(std::vector<Tensor> p) {
  return std::make_unique<RMSprop>(
      std::move(p),
      RMSpropOptions{.lr = 0.05, .weight_decay = 0.1, .momentum = 0.9, .centered = true});
}

std::unique_ptr<Optimizer> adagrad(std::vector<Tensor> p) {
  return std::make_unique<Adagrad>(
      std::move(p), AdagradOptions{.lr = 0.1, .lr_decay = 0.1, .initial_accumulator_value = 0.1});
}

class Skip : public ::testing::TestWithParam<Mode> {};

TEST_P(Skip, TrueKeepsEveryTensorSGD) { expect_skip_keeps_everything(sgd, GetParam()); }
TEST_P(Skip, TrueKeepsEveryTensorAdam) { expect_skip_keeps_everything(adam, GetParam()); }
TEST_P(Skip, TrueKeepsEveryTensorAdamW) { expect_skip_keeps_everything(adamw, GetParam()); }
TEST_P(Skip, FalseIsStepSGD) { expect_false_skip_is_step(sgd, GetParam()); }
TEST_P(Skip, FalseIsStepAdam) { expect_false_skip_is_step(adam, GetParam()); }
TEST_P(Skip, FalseIsStepAdamW) { expect_false_skip_is_step(adamw, GetParam()); }
TEST_P(Skip, TrueKeepsEveryTensorRMSprop) { expect_skip_keeps_everything(rmsprop, GetParam()); }
TEST_P(Skip, FalseIsStepRMSprop) { expect_false_skip_is_step(rmsprop, GetParam()); }
TEST_P(Skip, TrueKeepsEveryTensorAdagrad) { expect_skip_keeps_everything(adagrad, GetParam()); }
TEST_P(Skip, FalseIsStepAdagrad) { expect_false_skip_is_step(adagrad, GetParam()); }

// Mixed precision's use: skip the step when the gradients are not finite, decided in the graph.
TEST_P(Skip, ANonFiniteGradientNormSkipsWithoutASync) {
  Model m(adamw);
  warm_up(m, GetParam());
  const auto before = m.values();
  metrics::reset();
  {
    ModeGuard guard(GetParam());
    m.backward(1);
    m.w.set_grad(m.w.grad() / zeros({}));  // inf and nan
    const Tensor norm = clip_grad_norm_({m.w, m.b}, 1.0);
    m.opt->step(eq(isfinite(norm), scalar(0, DType::Bool)));
    if (GetParam() == Mode::Lazy) mark_step();
  }
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(m.values(), before);
}

INSTANTIATE_TEST_SUITE_P(Modes, Skip, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return info.param == Mode::Eager ? "Eager" : "Lazy";
                         });

}  // namespace
}  // namespace lt::optim
