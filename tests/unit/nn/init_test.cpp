// Initialization: PyTorch's defaults (kaiming-uniform a = sqrt(5) bounded by exactly
// 1/sqrt(fan_in), fan-in-bounded biases, ones/zeros for norms, N(0,1) embeddings), the init::
// schemes' sample statistics, and reproducibility under one seed in eager and lazy mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/unit/nn/nn_testing.h"

namespace lt {
namespace {

using testing::values;

struct Stats {
  double min, max, mean, var;
};

Stats stats(const Tensor& t) {
  const auto v = values(t);
  Stats s{*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end()), 0, 0};
  for (double x : v) s.mean += x / static_cast<double>(v.size());
  for (double x : v) s.var += (x - s.mean) * (x - s.mean) / static_cast<double>(v.size());
  return s;
}

/// U(-bound, bound) with n samples: inside the bound, reaching near both ends, mean 0 and
/// variance bound^2 / 3 within 5 standard errors.
void expect_uniform(const Tensor& t, double bound) {
  const Stats s = stats(t);
  const double n = static_cast<double>(t.numel());
  const float fbound = static_cast<float>(bound);  // the f32 bound the values are drawn in
  EXPECT_GE(s.min, -fbound);
  EXPECT_LE(s.max, fbound);
  EXPECT_GT(s.max, bound * (1 - 20 / n));
  EXPECT_LT(s.min, -bound * (1 - 20 / n));
  EXPECT_NEAR(s.mean, 0, 5 * bound / std::sqrt(3 * n));
  EXPECT_NEAR(s.var, bound * bound / 3, 5 * bound * bound * 0.3 / std::sqrt(n));
}

TEST(Init, LinearAndConvDefaultsAreBoundedByOneOverSqrtFanIn) {
  manual_seed(1);
  nn::Linear fc(400, 250);
  expect_uniform(fc.weight, 1 / std::sqrt(400.0));
  expect_uniform(fc.bias, 1 / std::sqrt(400.0));
  nn::Conv2d conv(16, 64, 3, {.groups = 2});  // fan_in = 16 / 2 * 9 = 72
  expect_uniform(conv.weight, 1 / std::sqrt(72.0));
  const Stats b = stats(conv.bias);
  EXPECT_LE(std::max(-b.min, b.max), static_cast<float>(1 / std::sqrt(72.0)));
}

TEST(Init, NormsAreOnesAndZerosEmbeddingsStandardNormal) {
  manual_seed(2);
  nn::LayerNorm ln({5});
  EXPECT_EQ(values(ln.weight), std::vector<double>(5, 1));
  EXPECT_EQ(values(ln.bias), std::vector<double>(5, 0));
  nn::Embedding emb(500, 64);  // 32000 samples
  const Stats s = stats(emb.weight);
  EXPECT_NEAR(s.mean, 0, 5 / std::sqrt(32000.0));
  EXPECT_NEAR(s.var, 1, 5 * std::sqrt(2 / 32000.0));
}

TEST(Init, SchemesHaveTheirStatistics) {
  manual_seed(3);
  const double n = 200 * 300;
  Tensor w = zeros({200, 300});  // fan_in 300, fan_out 200
  nn::init::uniform_(w, -2, 3);
  Stats s = stats(w);
  EXPECT_GE(s.min, -2);
  EXPECT_LT(s.max, 3);
  EXPECT_NEAR(s.mean, 0.5, 5 * 5 / std::sqrt(12 * n));
  nn::init::normal_(w, 1.5, 0.5);
  s = stats(w);
  EXPECT_NEAR(s.mean, 1.5, 5 * 0.5 / std::sqrt(n));
  EXPECT_NEAR(s.var, 0.25, 5 * 0.25 * std::sqrt(2 / n));
  nn::init::xavier_uniform_(w, 2);
  const Stats xu = stats(w);
  EXPECT_LE(xu.max, 2 * std::sqrt(6.0 / 500) * (1 + 1e-6));
  EXPECT_NEAR(xu.var, 4 * 6.0 / 500 / 3, 0.03 * 4 * 6.0 / 500 / 3);
  nn::init::xavier_normal_(w);
  EXPECT_NEAR(stats(w).var, 2.0 / 500, 0.03 * 2.0 / 500);
  nn::init::kaiming_normal_(w, 0, nn::init::FanMode::FanOut, nn::init::Nonlinearity::ReLU);
  EXPECT_NEAR(stats(w).var, 2.0 / 200, 0.03 * 2.0 / 200);
  nn::init::kaiming_uniform_(w, 0, nn::init::FanMode::FanIn, nn::init::Nonlinearity::ReLU);
  expect_uniform(w, std::sqrt(6.0 / 300));
  nn::init::constant_(w, 0.75);
  EXPECT_EQ(stats(w).min, 0.75);
  EXPECT_EQ(stats(w).max, 0.75);
  nn::init::ones_(w);
  EXPECT_EQ(stats(w).min, 1);
  EXPECT_EQ(stats(w).max, 1);
  nn::init::zeros_(w);
  EXPECT_EQ(stats(w).min, 0);
  EXPECT_EQ(stats(w).max, 0);
}

TEST(Init, GainsFansAndErrors) {
  using nn::init::Nonlinearity;
  EXPECT_EQ(nn::init::calculate_gain(Nonlinearity::Linear), 1);
  EXPECT_EQ(nn::init::calculate_gain(Nonlinearity::Tanh), 5.0 / 3);
  EXPECT_EQ(nn::init::calculate_gain(Nonlinearity::ReLU), std::sqrt(2.0));
  EXPECT_EQ(nn::init::calculate_gain(Nonlinearity::LeakyReLU, std::sqrt(5.0)), std::sqrt(2.0 / 6));
  EXPECT_EQ(nn::init::calculate_gain(Nonlinearity::SELU), 0.75);
  EXPECT_EQ(nn::init::fan_in_and_fan_out(zeros({8, 4, 3, 2})),
            (std::pair<int64_t, int64_t>{24, 48}));
  const int line = __LINE__ + 1;
  EXPECT_EQ(testing::error_of([] { nn::init::xavier_uniform_(zeros({5})); }),
            "init: fan in and fan out need a tensor of rank >= 2, got f32[5] at init_test.cpp:" +
                std::to_string(line));
  const int line2 = __LINE__ + 1;
  EXPECT_EQ(testing::error_of([] { nn::init::normal_(zeros({5}, DType::I64)); }),
            "init::normal_: i64[5] is not a floating-point tensor at init_test.cpp:" +
                std::to_string(line2));
  // Filling a parameter keeps it a trainable leaf.
  Tensor p = zeros({3, 3});
  p.requires_grad_();
  nn::init::normal_(p);
  EXPECT_TRUE(p.requires_grad());
}

std::map<std::string, std::vector<double>> build(uint64_t seed, Mode mode) {
  ModeGuard guard(mode);
  manual_seed(seed);
  nn::TransformerBlock block(16, 4);
  nn::Conv2d conv(3, 4, 3);
  nn::Embedding emb(10, 16);
  std::map<std::string, std::vector<double>> out = testing::snapshot(block.state_dict());
  for (const auto& [name, t] : conv.state_dict()) {
    EXPECT_FALSE(is_pending(t)) << name;  // initialization never traces
    out["conv." + name] = values(t);
  }
  out["emb"] = values(emb.weight);
  return out;
}

TEST(Init, OneSeedGivesTheSameWeightsInEagerAndLazyMode) {
  const auto eager = build(7, Mode::Eager);
  EXPECT_EQ(build(7, Mode::Eager), eager);
  EXPECT_EQ(build(7, Mode::Lazy), eager);
  EXPECT_NE(build(8, Mode::Eager), eager);
}

}  // namespace
}  // namespace lt
