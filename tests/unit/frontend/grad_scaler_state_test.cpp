// GradScaler's checkpoint: a run saved mid-way (model, optimizer and scaler in one safetensors
// file) and resumed in fresh objects ends bit-identical to the uninterrupted run, in eager and
// lazy mode; a bad state is refused whole.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "lt/amp.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"
#include "tests/support/scaled_training.h"
#include "tests/support/scratch_dir.h"

namespace lt::amp {
namespace {

using testing::Grad;
using testing::TinyModel;

constexpr int kSteps = 9;

Grad kind_of(int k) { return k == 1 ? Grad::Inf : k == 5 ? Grad::NaN : Grad::Finite; }

GradScaler::Options run_options() {
  return {.init_scale = 4096, .growth_factor = 4, .backoff_factor = 0.25, .growth_interval = 3};
}

void steps(TinyModel& m, optim::Optimizer& opt, GradScaler& scaler, int from, int to, Mode mode) {
  ModeGuard guard(mode);
  for (int k = from; k < to; ++k) {
    testing::scaled_step(m, opt, scaler, k, kind_of(k));
    if (mode == Mode::Lazy) mark_step();
  }
}

struct Final {
  std::map<std::string, std::vector<float>> values;
  float scale;
  int32_t tracker;
  bool operator==(const Final&) const = default;
};

Final final_of(const TinyModel& m, const optim::Optimizer& opt, const GradScaler& scaler) {
  return {testing::values(m, opt), scaler.get_scale().item<float>(),
          scaler.growth_tracker().item<int32_t>()};
}

class ScalerState : public ::testing::TestWithParam<Mode> {};

TEST_P(ScalerState, ResumeIsBitIdenticalToTheUninterruptedRun) {
  TinyModel straight;
  optim::SGD straight_opt(straight.params(), {.lr = 0.1, .momentum = 0.9});
  GradScaler straight_scaler(run_options());
  steps(straight, straight_opt, straight_scaler, 0, kSteps, GetParam());
  const Final want = final_of(straight, straight_opt, straight_scaler);

  testing::ScratchDir dir;
  for (int cut : {3, 5}) {  // mid-interval after the inf; right after a growth
    const std::string path = dir.path("cut" + std::to_string(cut) + ".safetensors");
    {
      TinyModel m;
      optim::SGD opt(m.params(), {.lr = 0.1, .momentum = 0.9});
      GradScaler scaler(run_options());
      steps(m, opt, scaler, 0, cut, GetParam());
      Checkpoint c = opt.state_dict();
      c.tensors.merge(scaler.state_dict().tensors);
      c.metadata.merge(scaler.state_dict().metadata);
      c.tensors["model.w"] = m.w;
      c.tensors["model.b"] = m.b;
      save(path, c.tensors, c.metadata);
    }
    TinyModel m;
    optim::SGD opt(m.params(), {.lr = 0.1, .momentum = 0.9});
    GradScaler scaler;  // default options: the checkpoint's come back with it
    const Checkpoint back = load(path);
    copy_state({{"model.w", m.w}, {"model.b", m.b}}, back.tensors, /*strict=*/false);
    opt.load_state_dict(back);
    scaler.load_state_dict(back);
    EXPECT_EQ(scaler.options().growth_interval, 3);
    EXPECT_EQ(scaler.options().growth_factor, 4);
    EXPECT_EQ(scaler.options().backoff_factor, 0.25);
    steps(m, opt, scaler, cut, kSteps, GetParam());
    EXPECT_EQ(final_of(m, opt, scaler), want) << "cut after step " << cut;
  }
  // 4096 -> 1024 (inf at 1) -> 4096 (2, 3, 4) -> 1024 (NaN at 5) -> 4096 (6, 7, 8).
  EXPECT_EQ(want.scale, 4096.0f);
  EXPECT_EQ(want.tracker, 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, ScalerState, ::testing::Values(Mode::Eager, Mode::Lazy),
                         [](const auto& info) {
                           return info.param == Mode::Eager ? "Eager" : "Lazy";
                         });

TEST(ScalerState, StateDictNamesTensorsAndOptions) {
  GradScaler scaler(run_options());
  const Checkpoint c = scaler.state_dict("amp");
  EXPECT_THAT(c.tensors, ::testing::SizeIs(2));
  EXPECT_EQ(c.tensors.at("amp.scale").item<float>(), 4096.0f);
  EXPECT_EQ(c.tensors.at("amp.growth_tracker").dtype(), DType::I32);
  EXPECT_EQ(c.metadata, (StringDict{{"amp.backoff_factor", "0.25"},
                                    {"amp.dynamic", "true"},
                                    {"amp.enabled", "true"},
                                    {"amp.growth_factor", "4"},
                                    {"amp.growth_interval", "3"},
                                    {"amp.init_scale", "4096"}}));
}

TEST(ScalerState, ABadStateIsRefusedAndChangesNothing) {
  using testing::error_of;
  const Checkpoint good = GradScaler(run_options()).state_dict();
  GradScaler scaler = GradScaler::constant(8);
  const auto expect_refused = [&](const Checkpoint& bad, const std::string& message) {
    EXPECT_THAT(error_of([&] { scaler.load_state_dict(bad); }),
                ::testing::StartsWith("GradScaler.load_state_dict: " + message));
    EXPECT_EQ(scaler.get_scale().item<float>(), 8.0f);
    EXPECT_FALSE(scaler.options().dynamic);
    EXPECT_EQ(scaler.options().growth_interval, 2000);
  };
  Checkpoint c = good;
  c.metadata.erase("scaler.dynamic");
  expect_refused(c, "scaler.dynamic is missing at ");
  c = good;
  c.metadata["scaler.growth_interval"] = "2.5";
  expect_refused(c, "scaler.growth_interval is 2.5, not an integer from 1 to 2147483647 at ");
  c = good;
  c.metadata["scaler.backoff_factor"] = "1.5";
  expect_refused(c, "scaler.backoff_factor must be in (0, 1), got 1.5 at ");
  c = good;
  c.tensors.erase("scaler.growth_tracker");
  expect_refused(c, "tensors do not match (missing: scaler.growth_tracker) at ");
  c = good;
  c.tensors["scaler.scale"] = from_vector<float>({1, 2}, {2});
  expect_refused(c, "tensors do not match (shape mismatch: scaler.scale: expected [], found [2])");
  // The good state loads, and other keys are ignored.
  c = good;
  c.tensors["model.w"] = zeros({3});
  scaler.load_state_dict(c);
  EXPECT_EQ(scaler.get_scale().item<float>(), 4096.0f);
  EXPECT_TRUE(scaler.options().dynamic);
}

}  // namespace
}  // namespace lt::amp
