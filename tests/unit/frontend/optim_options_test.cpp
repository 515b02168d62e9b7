// Optimizer options through their fields(): every optimizer's state_dict keys and text (PyTorch's
// names, the format checkpoints already hold), that text loaded back, an option added later, and
// each rule's message.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "frontend/optim/option_fields.h"
#include "lt/lt.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

/// The metadata of `opt`'s state_dict that holds group 0's options.
StringDict group_options(const Optimizer& opt) {
  StringDict out;
  for (const auto& [key, text] : opt.state_dict().metadata)
    if (key.starts_with("optim.0.") && key != "optim.0.params") out[key.substr(8)] = text;
  return out;
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    std::string s = e.what();
    return s.substr(0, s.rfind(" at "));
  }
  return "no error";
}

Tensor param() { return zeros({2}).requires_grad_(); }

TEST(OptimOptions, EveryOptimizerSavesItsOptionsUnderPyTorchsNames) {
  EXPECT_EQ(group_options(SGD({param()}, {.lr = 0.1,
                                          .momentum = 0.9,
                                          .dampening = 0.25,
                                          .weight_decay = 1e-4,
                                          .nesterov = false})),
            (StringDict{{"lr", "0.1"},
                        {"momentum", "0.9"},
                        {"dampening", "0.25"},
                        {"weight_decay", "0.0001"},
                        {"nesterov", "false"}}));
  EXPECT_EQ(group_options(Adam({param()}, {.betas = {0.8, 0.9}, .amsgrad = true})),
            (StringDict{{"lr", "0.001"},
                        {"betas", "0.8,0.9"},
                        {"eps", "1e-08"},
                        {"weight_decay", "0"},
                        {"amsgrad", "true"}}));
  EXPECT_EQ(group_options(AdamW({param()})), (StringDict{{"lr", "0.001"},
                                                         {"betas", "0.9,0.999"},
                                                         {"eps", "1e-08"},
                                                         {"weight_decay", "0.01"},
                                                         {"amsgrad", "false"}}));
  EXPECT_EQ(group_options(RMSprop({param()}, {.momentum = 0.5, .centered = true})),
            (StringDict{{"lr", "0.01"},
                        {"alpha", "0.99"},
                        {"eps", "1e-08"},
                        {"weight_decay", "0"},
                        {"momentum", "0.5"},
                        {"centered", "true"}}));
  EXPECT_EQ(group_options(Adagrad({param()}, {.lr_decay = 0.5, .initial_accumulator_value = 0.1})),
            (StringDict{{"lr", "0.01"},
                        {"lr_decay", "0.5"},
                        {"weight_decay", "0"},
                        {"initial_accumulator_value", "0.1"},
                        {"eps", "1e-10"}}));
}

TEST(OptimOptions, SavedTextLoadsBack) {
  // Metadata as a checkpoint holds it, written out by hand.
  Checkpoint c = SGD({param()}, {.momentum = 0.1}).state_dict();
  c.metadata["optim.0.lr"] = "0.3";
  c.metadata["optim.0.momentum"] = "0.7";
  c.metadata["optim.0.dampening"] = "0";
  c.metadata["optim.0.weight_decay"] = "1e-05";
  c.metadata["optim.0.nesterov"] = "true";
  SGD sgd({param()}, {.momentum = 0.2});
  sgd.load_state_dict(c);
  EXPECT_EQ(sgd.options(0).lr, 0.3);
  EXPECT_EQ(sgd.options(0).momentum, 0.7);
  EXPECT_EQ(sgd.options(0).weight_decay, 1e-05);
  EXPECT_TRUE(sgd.options(0).nesterov);

  Checkpoint a = Adam({param()}).state_dict();
  a.metadata["optim.0.betas"] = "0.5,0.75";
  a.metadata["optim.0.eps"] = "1e-06";
  Adam adam({param()});
  adam.load_state_dict(a);
  EXPECT_EQ(adam.options(0).betas, (std::array<double, 2>{0.5, 0.75}));
  EXPECT_EQ(adam.options(0).eps, 1e-06);
}

TEST(OptimOptions, EachRuleNamesTheOptionAndTheValue) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(message([] { SGD({param()}, {.momentum = -0.5}); }),
            "SGD: group 0: momentum must be >= 0, got -0.5");
  EXPECT_EQ(message([] { SGD({param()}, {.dampening = INFINITY}); }),
            "SGD: group 0: dampening must be finite, got inf");
  EXPECT_EQ(message([&] { SGD({param()}, {.weight_decay = nan}); }),
            "SGD: group 0: weight_decay must be >= 0, got nan");
  EXPECT_EQ(message([] {
              AdamW({param()}, {.betas = {-0.1, 0.9}});
            }),
            "AdamW: group 0: betas must be in [0, 1), got -0.1,0.9");
  EXPECT_EQ(message([] { RMSprop({param()}, {.eps = -1}); }),
            "RMSprop: group 0: eps must be >= 0, got -1");
  EXPECT_EQ(message([] { Adagrad({param()}, {.lr_decay = -2}); }),
            "Adagrad: group 0: lr_decay must be >= 0, got -2");
}

/// Options as they would be after `maximize` was added to checkpoints that lack it.
struct LaterOptions {
  double lr = 0.5;
  bool maximize = false;

  static constexpr auto fields() {
    return std::tuple{
        field("lr", &LaterOptions::lr, Rule::NonNegative),
        field("maximize", &LaterOptions::maximize).default_when_missing(),
    };
  }
};

TEST(OptimOptions, AnOptionAddedLaterLoadsFromTextWithoutIt) {
  EXPECT_EQ(fields_text(LaterOptions{}), (StringDict{{"lr", "0.5"}, {"maximize", "false"}}));
  const LaterOptions o = fields_from_text<LaterOptions>({{"lr", "0.25"}});
  EXPECT_EQ(o.lr, 0.25);
  EXPECT_FALSE(o.maximize);
  EXPECT_TRUE(fields_from_text<LaterOptions>({{"lr", "1"}, {"maximize", "true"}}).maximize);
  EXPECT_EQ(message([] {
              fields_from_text<LaterOptions>({{"maximize", "true"}});
            }),
            "lr is missing");
  EXPECT_EQ(message([] {
              fields_from_text<LaterOptions>({{"lr", "1"}, {"maximize", "1"}});
            }),
            "maximize is \"1\", not true or false");
  EXPECT_EQ(message([] { check_fields(LaterOptions{.lr = -1}); }), "lr must be >= 0, got -1");
}

}  // namespace
}  // namespace lt::optim
