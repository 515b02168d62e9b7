// Optimizer state_dict/load_state_dict: the documented names, a save/load/continue run that is
// bit-identical to an uninterrupted one (eager and lazy, SGD, AdamW, RMSprop and Adagrad, with a
// schedule), and loading errors that name the problem and change nothing.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/optim.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/train_steps.h"

namespace lt::optim {
namespace {

TEST(OptimState, NamesAndOptions) {
  Tensor w = zeros({2, 3}).requires_grad_(), v = zeros({3}).requires_grad_(),
         b = zeros({3}).requires_grad_();
  AdamW opt({{{w, v}, {.weight_decay = 0.1, .amsgrad = true}},
             {{b}, {.lr = 0.01, .betas = {0.8, 0.99}, .weight_decay = 0}}});
  const Checkpoint s = opt.state_dict();
  std::vector<std::string> names;
  for (const auto& [name, t] : s.tensors) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "optim.0.0.exp_avg", "optim.0.0.exp_avg_sq", "optim.0.0.max_exp_avg_sq",
                       "optim.0.0.step", "optim.0.1.exp_avg", "optim.0.1.exp_avg_sq",
                       "optim.0.1.max_exp_avg_sq", "optim.0.1.step", "optim.1.0.exp_avg",
                       "optim.1.0.exp_avg_sq", "optim.1.0.step"}));
  EXPECT_EQ(s.tensors.at("optim.0.0.exp_avg").shape(), (Shape{2, 3}));
  EXPECT_EQ(s.tensors.at("optim.0.0.step").type(), (TensorType{DType::F32, {}}));
  EXPECT_EQ(s.metadata, (StringDict{{"optim.type", "AdamW"},
                                    {"optim.groups", "2"},
                                    {"optim.0.params", "2"},
                                    {"optim.0.lr", "0.001"},
                                    {"optim.0.betas", "0.9,0.999"},
                                    {"optim.0.eps", "1e-08"},
                                    {"optim.0.weight_decay", "0.1"},
                                    {"optim.0.amsgrad", "true"},
                                    {"optim.1.params", "1"},
                                    {"optim.1.lr", "0.01"},
                                    {"optim.1.betas", "0.8,0.99"},
                                    {"optim.1.eps", "1e-08"},
                                    {"optim.1.weight_decay", "0"},
                                    {"optim.1.amsgrad", "false"}}));
  SGD sgd({w}, {.lr = 0.1, .momentum = 0.9, .nesterov = true});
  const Checkpoint t = sgd.state_dict("opt2");
  EXPECT_EQ(t.tensors.size(), 2u);
  EXPECT_TRUE(t.tensors.contains("opt2.0.0.momentum_buffer"));
  EXPECT_EQ(t.metadata.at("opt2.0.nesterov"), "true");
}

/// A two-parameter least-squares model trained by an optimizer under a schedule.
struct Trainer {
  Tensor w, b;
  std::unique_ptr<Optimizer> opt;
  std::unique_ptr<sched::Scheduler> sched;
  Tensor x = from_vector<float>({1, 2, -1, 0.5, 3, -2}, {3, 2});
  Tensor y = from_vector<float>({1, -1, 2}, {3, 1});

  Trainer(const std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>& make, float init) {
    w = full({2, 1}, init).requires_grad_();
    b = full({1}, init).requires_grad_();
    opt = make({w, b});
    sched = std::make_unique<sched::Scheduler>(
        *opt, sched::LinearWarmup(2, sched::CosineAnnealingLR(6, 0.1)));
  }
  void steps(int n, Mode mode) {
    testing::train_steps(*opt, n,
                         [&](int) {
                           const Tensor r = matmul(x, w) + b - y;
                           return mean(r * r);
                         },
                         {.mode = mode, .after_update = [&](int) { sched->step(); }});
  }
  TensorDict everything() const {
    TensorDict all = opt->state_dict().tensors;
    all["model.w"] = w;
    all["model.b"] = b;
    return all;
  }
};

void expect_bit_identical(const TensorDict& a, const TensorDict& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, t] : a) {
    ASSERT_TRUE(b.contains(name)) << name;
    EXPECT_EQ(t.to_vector<float>(), b.at(name).to_vector<float>()) << name;
  }
}

void expect_resume_is_exact(
    const std::function<std::unique_ptr<Optimizer>(std::vector<Tensor>)>& make, Mode mode) {
  testing::ScratchDir dir;
  Trainer straight(make, 0.5f);
  straight.steps(6, mode);

  Trainer first(make, 0.5f);
  first.steps(3, mode);
  StringDict meta = first.opt->state_dict().metadata;
  meta.merge(first.sched->state_dict());
  save(dir.path("ckpt.safetensors"), first.everything(), meta);

  Trainer resumed(make, -3.0f);  // other weights and a fresh optimizer: all comes from the file
  const Checkpoint c = load(dir.path("ckpt.safetensors"));
  copy_state({{"model.w", resumed.w}, {"model.b", resumed.b}}, c.tensors, /*strict=*/false);
  resumed.opt->load_state_dict(c);
  resumed.sched->load_state_dict(c.metadata);
  EXPECT_EQ(resumed.opt->lr(0), first.opt->lr(0));
  resumed.steps(3, mode);
  expect_bit_identical(resumed.everything(), straight.everything());
}

std::unique_ptr<Optimizer> make_sgd(std::vector<Tensor> p) {
  return std::make_unique<SGD>(
      std::move(p), SGDOptions{.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .weight_decay = 0.01});
}
std::unique_ptr<Optimizer> make_adamw(std::vector<Tensor> p) {
  return std::make_unique<AdamW>(std::move(p), AdamWOptions{.lr = 0.05, .amsgrad = true});
}

std::unique_ptr<Optimizer> make_rmsprop(std::vector<Tensor> p) {
  return std::make_unique<RMSprop>(std::move(p),
                                   RMSpropOptions{.lr = 0.02, .momentum = 0.5, .centered = true});
}

TEST(OptimState, ResumeIsBitExactEagerRMSprop) {
  expect_resume_is_exact(make_rmsprop, Mode::Eager);
}
TEST(OptimState, ResumeIsBitExactLazyRMSprop) { expect_resume_is_exact(make_rmsprop, Mode::Lazy); }
std::unique_ptr<Optimizer> make_adagrad(std::vector<Tensor> p) {
  return std::make_unique<Adagrad>(
      std::move(p), AdagradOptions{.lr = 0.05, .lr_decay = 0.2, .initial_accumulator_value = 0.5});
}

TEST(OptimState, ResumeIsBitExactEagerAdagrad) {
  expect_resume_is_exact(make_adagrad, Mode::Eager);
}
TEST(OptimState, ResumeIsBitExactLazyAdagrad) { expect_resume_is_exact(make_adagrad, Mode::Lazy); }
TEST(OptimState, ResumeIsBitExactEagerSGD) { expect_resume_is_exact(make_sgd, Mode::Eager); }
TEST(OptimState, ResumeIsBitExactEagerAdamW) { expect_resume_is_exact(make_adamw, Mode::Eager); }
TEST(OptimState, ResumeIsBitExactLazySGD) { expect_resume_is_exact(make_sgd, Mode::Lazy); }
TEST(OptimState, ResumeIsBitExactLazyAdamW) { expect_resume_is_exact(make_adamw, Mode::Lazy); }

TEST(OptimState, LoadingTurnsAmsgradOnWithItsSlot) {
  Tensor a = zeros({2}).requires_grad_(), b = zeros({2}).requires_grad_();
  Adam with({a}, {.amsgrad = true}), without({b});
  without.load_state_dict(with.state_dict());
  EXPECT_TRUE(without.options(0).amsgrad);
  EXPECT_TRUE(without.state_dict().tensors.contains("optim.0.0.max_exp_avg_sq"));
}

class OptimStateErrors : public ::testing::Test {
 protected:
  Tensor w = zeros({2, 3}).requires_grad_(), b = zeros({3}).requires_grad_();
  AdamW opt{{w, b}, {.lr = 0.1}};
  Checkpoint good;

  void SetUp() override {
    w.set_grad(ones({2, 3}));
    b.set_grad(ones({3}));
    opt.step();
    good = opt.state_dict();
  }

  /// The error of loading `c`, without its location; and nothing changed.
  std::string load_error(const Checkpoint& c) {
    const std::vector<float> before =
        opt.state_dict().tensors.at("optim.0.0.exp_avg").to_vector<float>();
    std::string what = "no error";
    try {
      opt.load_state_dict(c);
    } catch (const Error& e) {
      what = e.what();
      what = what.substr(0, what.rfind(" at "));
    }
    EXPECT_EQ(opt.lr(0), 0.1);
    EXPECT_EQ(opt.state_dict().tensors.at("optim.0.0.exp_avg").to_vector<float>(), before);
    EXPECT_EQ(opt.state_dict().tensors.size(), 6u);
    return what;
  }
};

TEST_F(OptimStateErrors, AnotherOptimizerType) {
  Tensor p = zeros({1}).requires_grad_();
  EXPECT_EQ(load_error(SGD({p}).state_dict()),
            "AdamW.load_state_dict: the state is of optimizer type SGD, this one is AdamW");
  EXPECT_EQ(load_error({}),
            "AdamW.load_state_dict: no optim.type in the metadata (not an optimizer's state?)");
}

TEST_F(OptimStateErrors, GroupAndParameterCounts) {
  Checkpoint c = good;
  c.metadata["optim.groups"] = "2";
  EXPECT_EQ(load_error(c),
            "AdamW.load_state_dict: the state has 2 parameter groups, this optimizer 1");
  c = good;
  c.metadata["optim.0.params"] = "3";
  EXPECT_EQ(load_error(c),
            "AdamW.load_state_dict: optim.0.params is 3, this optimizer's group 0 has 2");
}

TEST_F(OptimStateErrors, BadOrUnknownOptions) {
  Checkpoint c = good;
  c.metadata["optim.0.lr"] = "fast";
  EXPECT_EQ(load_error(c), "AdamW.load_state_dict: optim.0.lr is \"fast\", not a finite number");
  c = good;
  c.metadata["optim.0.betas"] = "0.9";
  EXPECT_EQ(load_error(c),
            "AdamW.load_state_dict: optim.0.betas is \"0.9\": 1 numbers, expected 2");
  c = good;
  c.metadata["optim.0.eps"] = "-1";
  EXPECT_EQ(load_error(c), "AdamW.load_state_dict: optim.0.eps must be >= 0, got -1");
  c = good;
  c.metadata.erase("optim.0.amsgrad");
  EXPECT_EQ(load_error(c), "AdamW.load_state_dict: optim.0.amsgrad is missing");
  c = good;
  c.metadata["optim.0.momentum"] = "0.9";
  EXPECT_EQ(load_error(c), "AdamW.load_state_dict: optim.0.momentum is not an option of AdamW");
}

TEST_F(OptimStateErrors, MissingUnexpectedOrMisshapenTensors) {
  Checkpoint c = good;
  c.tensors.erase("optim.0.1.exp_avg_sq");
  c.tensors["optim.0.0.exp_avg"] = zeros({3, 2});
  c.tensors["optim.0.2.step"] = zeros({});
  c.tensors["model.w"] = zeros({5});  // not under optim.: ignored
  EXPECT_EQ(load_error(c),
            "AdamW.load_state_dict: tensors do not match (missing: optim.0.1.exp_avg_sq; "
            "unexpected: optim.0.2.step; shape mismatch: optim.0.0.exp_avg: expected [2,3], "
            "found [3,2])");
}

}  // namespace
}  // namespace lt::optim
