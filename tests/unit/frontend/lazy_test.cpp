// Lazy mode: tracing, mark_step, syncs, the graph cache and scalar handling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/all_close.h"

namespace lt {
namespace {

class Lazy : public ::testing::Test {
 protected:
  void SetUp() override { metrics::reset(); }
};

TEST_F(Lazy, NothingRunsUntilMarkStep) {
  Tensor a = from_vector<float>({1, 2, 3}, {3});
  ModeGuard lazy(Mode::Lazy);
  Tensor b = exp(a) * 2.0 + 1.0;
  EXPECT_TRUE(is_pending(b));
  EXPECT_EQ(metrics::counter("graphs_run"), 0);
  mark_step();
  EXPECT_FALSE(is_pending(b));
  EXPECT_EQ(metrics::counter("graphs_run"), 1);
  ModeGuard eager(Mode::Eager);
  EXPECT_TRUE(testing::AllClose(b, exp(a) * 2.0 + 1.0));
}

TEST_F(Lazy, ShapeErrorsAreThrownAtTraceTimeWithTheSameText) {
  Tensor a = zeros({4, 8}), b = zeros({3});
  ModeGuard lazy(Mode::Lazy);
  try {
    add(a, b);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).substr(0, 71),
              "add: cannot broadcast f32[4,8] with f32[3] (operands: f32[4,8], f32[3])");
  }
}

TEST_F(Lazy, ReadingAValueSyncsOnlyItsSubgraphAndIsCountedWithItsLine) {
  Tensor a = from_vector<float>({1, 2}, {2});
  ModeGuard lazy(Mode::Lazy);
  Tensor s = sum(a * 3.0);
  Tensor other = a + 5.0;
  const int line = __LINE__ + 1;
  EXPECT_FLOAT_EQ(s.item<float>(), 9.0f);
  EXPECT_TRUE(is_pending(other));
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_EQ(metrics::counter("sync: item at lazy_test.cpp:" + std::to_string(line)), 1);
}

TEST_F(Lazy, ChangingAScalarEveryStepDoesNotRecompile) {
  Tensor w = from_vector<float>({1, 2, 3}, {3});
  ModeGuard lazy(Mode::Lazy);
  for (int step = 0; step < 5; ++step) {
    w = w - (0.1 + step * 0.01) * w;  // a learning rate that changes every step
    mark_step();
  }
  EXPECT_EQ(metrics::counter("cache_miss"), 1);
  EXPECT_EQ(metrics::counter("cache_hit"), 4);
  ModeGuard eager(Mode::Eager);
  double expect = 1;
  for (int step = 0; step < 5; ++step) expect *= 1 - (0.1 + step * 0.01);
  EXPECT_NEAR(w.to_vector<float>()[0], expect, 1e-6);
}

TEST_F(Lazy, SpecialScalarsAndConstantsAreBakedOthersAreParameters) {
  Tensor x = from_vector<float>({1, 2}, {2});
  ModeGuard lazy(Mode::Lazy);
  Tensor y = x * 1.0 + x * 0.5 + x * constant(0.25);
  const std::string text = debug::graph_text(std::vector{y});
  EXPECT_NE(text.find("full() {shape=[], dtype=f32, value=1}"), std::string::npos) << text;
  EXPECT_NE(text.find("full() {shape=[], dtype=f32, value=0.25}"), std::string::npos) << text;
  EXPECT_EQ(text.find("value=0.5"), std::string::npos) << text;  // 0.5 is a parameter
  EXPECT_NE(text.find("%p1: f32[]"), std::string::npos) << text;
}

TEST_F(Lazy, EqualValuesStaySeparateParameters) {
  Tensor a = from_vector<float>({1, 2}, {2});
  Tensor b = from_vector<float>({1, 2}, {2});
  ModeGuard lazy(Mode::Lazy);
  Tensor c = a + b;
  const std::string text = debug::graph_text(std::vector{c});
  EXPECT_NE(text.find("graph @step(%p0: f32[2], %p1: f32[2])"), std::string::npos) << text;
  Tensor d = a + a;  // the same buffer twice is one parameter
  const std::string text2 = debug::graph_text(std::vector{d});
  EXPECT_NE(text2.find("graph @step(%p0: f32[2])"), std::string::npos) << text2;
}

TEST_F(Lazy, EagerOpOnPendingTensorIsAClearError) {
  Tensor a = from_vector<float>({1, 2}, {2});
  Tensor p;
  {
    ModeGuard lazy(Mode::Lazy);
    p = a * 3.0;
  }
  try {
    exp(p);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exp: operand has pending lazy work; call "
                                         "lt::mark_step() first"),
              std::string::npos)
        << e.what();
  }
  mark_step();
  EXPECT_TRUE(testing::AllClose(exp(p), exp(a * 3.0)));
}

TEST_F(Lazy, RandomNumbersMatchEager) {
  manual_seed(42);
  Tensor e1 = rand({5, 3}), e2 = randn({7});
  manual_seed(42);
  Tensor l1, l2;
  {
    ModeGuard lazy(Mode::Lazy);
    l1 = rand({5, 3});
    l2 = randn({7});
    mark_step();
  }
  EXPECT_EQ(l1.to_vector<float>(), e1.to_vector<float>());
  EXPECT_EQ(l2.to_vector<float>(), e2.to_vector<float>());
}

TEST_F(Lazy, InPlaceUpdateRebinds) {
  Tensor w = from_vector<float>({1, 2}, {2});
  Tensor alias = w;  // the same tensor handle
  ModeGuard lazy(Mode::Lazy);
  w.sub_(from_vector<float>({0.5f, 0.5f}, {2}));
  EXPECT_TRUE(is_pending(alias));
  // The old buffer of w may be reused for its new value.
  EXPECT_EQ(debug::graph_text(std::vector{w}),
            "graph @step(%p0: f32[2], %p1: f32[2]) donate(%p0: 0) {\n"
            "  %0 = sub(%p0, %p1) : f32[2]\n  return %0\n}\n");
  mark_step();
  EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{0.5f, 1.5f}));
}

TEST_F(Lazy, BackwardTracesIntoTheSamePendingGraph) {
  Tensor w = from_vector<float>({0.5f, -1.0f, 2.0f}, {3}).requires_grad_();
  Tensor x = from_vector<float>({1, 2, 3}, {3});
  Tensor eager_grad;
  {
    Tensor loss = sum(tanh(w * x));
    loss.backward();
    eager_grad = w.grad();
    w.zero_grad();
  }
  ModeGuard lazy(Mode::Lazy);
  Tensor loss = sum(tanh(w * x));
  loss.backward();
  EXPECT_TRUE(is_pending(w.grad()));
  mark_step();
  EXPECT_EQ(metrics::counter("graphs_run"), 1);
  EXPECT_TRUE(testing::AllClose(w.grad(), eager_grad, 1e-6, 1e-6));
}

}  // namespace
}  // namespace lt

namespace lt {
namespace {

TEST_F(Lazy, RecompileExplanationNamesTheChangedShapeAndItsLine) {
  clear_graph_cache();
  debug::set_enabled(true);
  debug::take_log();
  Tensor w = ones({4, 3});
  int step_line = 0, trace_line = 0;
  for (int64_t batch : {8, 8, 5}) {
    Tensor x = ones({batch, 4});
    ModeGuard lazy(Mode::Lazy);
    trace_line = __LINE__ + 1;
    Tensor y = matmul(x, w);
    step_line = __LINE__ + 1;
    mark_step();
  }
  debug::set_enabled(false);
  std::vector<std::string> log, memory;
  for (std::string& line : debug::take_log())
    (line.find(" memory: ") != std::string::npos ? memory : log).push_back(std::move(line));
  ASSERT_EQ(log.size(), 4u);  // three runs and one recompile explanation
  // Each compile reports its memory: inputs w and x, the fresh result y.
  ASSERT_EQ(memory.size(), 2u);
  EXPECT_THAT(memory[1], ::testing::MatchesRegex(
                             "lt: graph=[0-9a-f]+ memory: inputs 0.00 MB in 2 tensors \\(0.00 MB "
                             "in 0 donated to results\\), fresh results 0.00 MB, .*, planned "
                             "peak 0.00 MB"));
  EXPECT_GE(debug::planned_peak_bytes(), (8 * 4 + 4 * 3 + 8 * 3) * 4);
  EXPECT_EQ(log[2],
            "lt: recompile #1 (mark_step at lazy_test.cpp:" + std::to_string(step_line) +
                "): parameter 0 is f32[5,4], cached graph had f32[8,4]; first use: %0 = "
                "matmul(%p0, %p1) {transpose_a=false, transpose_b=false} : f32[5,3]  (traced at "
                "lazy_test.cpp:" + std::to_string(trace_line) + ")");
  EXPECT_NE(log[1].find("cache=hit"), std::string::npos) << log[1];
  EXPECT_NE(log[3].find("cache=miss"), std::string::npos) << log[3];
}

}  // namespace
}  // namespace lt

namespace lt {
namespace {

TEST_F(Lazy, AFailedStepLeavesParametersAsTheyWere) {
  Tensor w = from_vector<float>({0.5f, -0.25f, 1.0f, 2.0f, 0.1f, -0.3f}, {2, 3}).requires_grad_();
  const Tensor x = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<float> before = w.to_vector<float>();
  ModeGuard lazy(Mode::Lazy);
  auto step = [&](const Tensor& labels) {
    w.zero_grad();
    Tensor loss = cross_entropy(matmul(x, w, false, true), labels);
    loss.backward();
    NoGradGuard no_grad;
    w.sub_(w.grad() * 0.1);
  };
  step(from_vector<int64_t>({1, 7}, {2}));  // label 7 is out of range for 2 classes
  EXPECT_THROW(mark_step(), Error);
  EXPECT_FALSE(is_pending(w));
  EXPECT_EQ(w.to_vector<float>(), before);
  step(from_vector<int64_t>({1, 0}, {2}));  // a good step still works afterwards
  mark_step();
  EXPECT_NE(w.to_vector<float>(), before);
}

TEST_F(Lazy, LaunchProfileTimesEveryLaunchOfACompiledStep) {
  if (compile_options().opt_level < 2) GTEST_SKIP() << "needs fused loop kernels";
  const Tensor x = from_vector<float>({1, -2, 3, 4, -5, 6}, {2, 3});
  const Tensor w = from_vector<float>({0.5f, -1, 2, 1, 0, -0.5f, 3, 1, 1, 2, -2, 0}, {4, 3});
  debug::set_profiling(true);
  ModeGuard lazy(Mode::Lazy);
  for (int i = 0; i < 3; ++i) {
    Tensor y = relu(matmul(x, w, false, true)) * 2.0;
    Tensor z = sin(x) * 3.0;
    mark_step();
  }
  debug::set_profiling(false);
  const std::string report = debug::profile_report();
  // One graph of this test: the matmul with its fused epilogue, and a loop kernel, each with its
  // share of the graph's time, slowest first.
  EXPECT_THAT(report, ::testing::ContainsRegex("graph [0-9a-f]{16}: 3 runs, [0-9.]+ ms per run in 2 launches\n"))
      << report;
  EXPECT_THAT(report, ::testing::ContainsRegex(
                          "  +[0-9.]+ us +[0-9.]+%  #[01]   kernel [01] matmul\\+loop f32\\[2,4\\] matmul\\+relu\\+mul\n"))
      << report;
  EXPECT_THAT(report, ::testing::ContainsRegex(
                          "  +[0-9.]+ us +[0-9.]+%  #[01]   kernel [01] loop f32\\[2,3\\] sin\\+mul\n"))
      << report;
}

TEST_F(Lazy, FloatToIntCastsSaturateAndTakeNaNToZeroEagerAndCompiled) {
  // Found by fuzz_ir_compile's check on a hand-written graph: converting NaN, inf or a value
  // past the integer's range was undefined in the eager kernel (UBSan float-cast-overflow) and
  // poison in compiled code.
  const Tensor f = from_vector<float>({NAN, INFINITY, -INFINITY, 3e9f, -3e9f, 2.9f, -2.9f}, {7});
  const Tensor d = from_vector<double>({NAN, 1e300, -1e19, 9.2e18, -2.5, 0.5, -0.0}, {7});
  const std::vector<int32_t> want32 = {0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 2, -2};
  const std::vector<int64_t> want64 = {0, INT64_MAX, INT64_MIN, 9200000000000000000, -2, 0, 0};
  EXPECT_EQ(cast(f, DType::I32).to_vector<int32_t>(), want32);
  EXPECT_EQ(cast(d, DType::I64).to_vector<int64_t>(), want64);
  ModeGuard lazy(Mode::Lazy);
  const Tensor a = cast(f, DType::I32), b = cast(d, DType::I64);
  mark_step();
  if (compile_options().opt_level >= 2) {
    EXPECT_GE(metrics::counter("loop_kernels"), 1);
  }
  EXPECT_EQ(a.to_vector<int32_t>(), want32);
  EXPECT_EQ(b.to_vector<int64_t>(), want64);
}

}  // namespace
}  // namespace lt
