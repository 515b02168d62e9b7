// GradScaler's options: each bad one is an lt::InputError naming the option and its value.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "lt/amp.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt::amp {
namespace {

/// The message of constructing a scaler with `o`, and the one expected: "GradScaler: <what>"
/// and the constructing line.
void expect_refused(const GradScalerOptions& o, const std::string& what) {
  const Loc here = Loc::current();
  EXPECT_EQ(testing::error_of<InputError>([&] { GradScaler scaler(o, here); }),
            "GradScaler: " + what + " at " + location_str(here));
}

TEST(ScalerOptions, EachBadOptionIsNamedWithItsValue) {
  const double inf = std::numeric_limits<double>::infinity();
  expect_refused({.init_scale = 0}, "init_scale must be > 0 and finite in f32, got 0");
  expect_refused({.init_scale = -2}, "init_scale must be > 0 and finite in f32, got -2");
  expect_refused({.init_scale = 1e39}, "init_scale must be > 0 and finite in f32, got 1e+39");
  expect_refused({.init_scale = inf}, "init_scale must be > 0 and finite in f32, got inf");
  expect_refused({.growth_factor = 1}, "growth_factor must be > 1 and finite, got 1");
  expect_refused({.growth_factor = inf}, "growth_factor must be > 1 and finite, got inf");
  expect_refused({.backoff_factor = 0}, "backoff_factor must be in (0, 1), got 0");
  expect_refused({.backoff_factor = 1}, "backoff_factor must be in (0, 1), got 1");
  expect_refused({.backoff_factor = std::numeric_limits<double>::quiet_NaN()},
                 "backoff_factor must be in (0, 1), got nan");
  expect_refused({.growth_interval = 0}, "growth_interval must be >= 1, got 0");
  // A static scale checks its options too (they travel in its checkpoint).
  expect_refused({.growth_interval = -3, .dynamic = false}, "growth_interval must be >= 1, got -3");
}

TEST(ScalerOptions, AConstantScaleIsNamedScale) {
  const Loc here = Loc::current();
  EXPECT_EQ(
      testing::error_of<InputError>([&] { (void)GradScaler::constant(-1, here); }),
      "GradScaler::constant: scale must be > 0 and finite in f32, got -1 at " + location_str(here));
}

TEST(ScalerOptions, DefaultsArePyTorchs) {
  const GradScaler scaler;
  EXPECT_EQ(scaler.options().init_scale, 65536);
  EXPECT_EQ(scaler.options().growth_factor, 2);
  EXPECT_EQ(scaler.options().backoff_factor, 0.5);
  EXPECT_EQ(scaler.options().growth_interval, 2000);
  EXPECT_TRUE(scaler.is_enabled());
  EXPECT_TRUE(scaler.options().dynamic);
  EXPECT_EQ(scaler.get_scale().item<float>(), 65536.0f);
  EXPECT_EQ(scaler.growth_tracker().item<int32_t>(), 0);
  EXPECT_FALSE(GradScaler::constant(1024).options().dynamic);
}

}  // namespace
}  // namespace lt::amp
