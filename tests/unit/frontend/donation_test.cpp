// Lazy mode's in-place updates: at mark_step the result takes over the old buffer when nothing
// else holds it, and never when something still can read the old value.
#include <gtest/gtest.h>

#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"

namespace lt {
namespace {

class Donation : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = compile_options();
    CompileOptions o = saved_;
    o.opt_level = 2;
    set_compile_options(o);
    metrics::reset();
  }
  void TearDown() override { set_compile_options(saved_); }
  CompileOptions saved_;
};

const void* data_of(const Tensor& t) { return t.impl()->data(); }

TEST_F(Donation, SgdStepUpdatesParametersInPlace) {
  Tensor w = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = from_vector<float>({0, 0, 0, 0, 0, 0}, {2, 3});
  const Tensor g = from_vector<float>({1, 1, 1, 2, 2, 2}, {2, 3});
  ModeGuard lazy(Mode::Lazy);
  std::vector<float> ew{1, 2, 3, 4, 5, 6}, ev(6, 0);
  for (int step = 0; step < 3; ++step) {
    const void* before = data_of(w);
    v.mul_(0.9).add_(g);
    w.sub_(v * 0.1);
    mark_step();
    EXPECT_EQ(data_of(w), before) << "step " << step;
    const std::vector<float> gv = g.to_vector<float>();
    for (int i = 0; i < 6; ++i) {
      ev[i] = 0.9f * ev[i] + gv[i];
      ew[i] -= 0.1f * ev[i];
    }
    const std::vector<float> got = w.to_vector<float>();
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(got[i], ew[i], 1e-6) << "step " << step;
  }
  EXPECT_GE(metrics::counter("donations_taken"), 4);
  EXPECT_EQ(metrics::counter("donations_refused"), 0);
}

TEST_F(Donation, AnAliasOfTheOldValueKeepsIt) {
  Tensor w = from_vector<float>({1, 2, 3}, {3});
  ModeGuard lazy(Mode::Lazy);
  const Tensor old = snapshot(w);  // shares w's buffer (what autograd saves)
  w.sub_(w * 0.5);
  mark_step();
  EXPECT_NE(data_of(w), data_of(old));
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f}));
  EXPECT_EQ(metrics::counter("donations_refused"), 1);
}

// The update fused into the matmul's epilogue writes over w, storing through w's pointer: taken,
// it runs in w's buffer; refused (an alias holds the old w), in a fresh copy of it.
TEST_F(Donation, AnEpilogueUpdateInPlaceTakenAndRefused) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {0.5f, -1, 2, 0.25f, 3, -2};
  const std::vector<float> w0 = {10, 20, 30, 40};
  std::vector<float> want(4);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      float d = 0;
      for (int k = 0; k < 3; ++k) d += a[i * 3 + k] * b[k * 2 + j];
      want[i * 2 + j] = w0[i * 2 + j] - 0.25f * d;
    }
  for (const bool alias : {false, true}) {
    metrics::reset();
    Tensor w = from_vector<float>(w0, {2, 2});
    const Tensor ta = from_vector<float>(a, {2, 3}), tb = from_vector<float>(b, {3, 2});
    ModeGuard lazy(Mode::Lazy);
    const Tensor old = alias ? snapshot(w) : Tensor();
    w.sub_(matmul(ta, tb) * 0.25);
    mark_step();
    const std::vector<float> got = w.to_vector<float>();
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], want[i]) << "alias " << alias;
    EXPECT_EQ(metrics::counter("donations_refused"), alias ? 1 : 0);
    if (alias) {
      EXPECT_EQ(old.to_vector<float>(), w0);
    }
  }
}

TEST_F(Donation, APendingReaderOfTheOldValueStillSeesIt) {
  Tensor w = from_vector<float>({1, 2, 3}, {3});
  ModeGuard lazy(Mode::Lazy);
  Tensor y = exp(w) * 2.0;  // traced before the update: reads the old w
  w.sub_(w * 0.5);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f}));  // a sync: no donation
  mark_step();
  const std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], 2 * std::exp(static_cast<float>(i + 1)), 1e-4);
}

TEST_F(Donation, SameStepReaderAndUpdateGiveBothValues) {
  Tensor w = from_vector<float>({1, 2, 3}, {3});
  ModeGuard lazy(Mode::Lazy);
  Tensor s = sum(w * w);  // a reduction of the old w, in the same graph as the update
  w.sub_(w * 0.5);
  mark_step();
  EXPECT_FLOAT_EQ(s.item<float>(), 14.0f);
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0.5f, 1, 1.5f}));
}

}  // namespace
}  // namespace lt
