#include "passes/fold.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::full_value;
using testing::parse_ok;
using testing::result_node;
using testing::run_checked;

// Folds `expr` over constants %0..%2 (scalars of dtype `dt` holding a, b, c) into one full and
// returns its value; `out` is the expression's result type.
double fold_value(const std::string& dt, double a, double b, const std::string& expr,
                  const std::string& out, double c = 0) {
  ir::Graph g = parse_ok(fmt::format(R"(
    graph @f() {{
      %0 = full() {{shape=[], dtype={0}, value={1}}} : {0}[]
      %1 = full() {{shape=[], dtype={0}, value={2}}} : {0}[]
      %2 = full() {{shape=[], dtype={0}, value={3}}} : {0}[]
      %3 = {4} : {5}
      return %3
    }})", dt, a, b, c, expr, out));
  run_checked(fold, g, true);
  EXPECT_EQ(g.nodes().size(), 1u) << ir::print(g);
  EXPECT_EQ(result_node(g).types[0], g.type(g.results()[0]));
  return full_value(g);
}

// The expression stays unfolded (fold returns false).
void expect_unfolded(const std::string& dt, double a, double b, const std::string& expr,
                     const std::string& out) {
  ir::Graph g = parse_ok(fmt::format(R"(
    graph @f() {{
      %0 = full() {{shape=[], dtype={0}, value={1}}} : {0}[]
      %1 = full() {{shape=[], dtype={0}, value={2}}} : {0}[]
      %2 = {3} : {4}
      return %2
    }})", dt, a, b, expr, out));
  run_checked(fold, g, false);
}

TEST(Fold, FloatArithmeticRoundsToF32) {
  EXPECT_EQ(fold_value("f32", 2, 3, "add(%0, %1)", "f32[]"), 5.0);
  // Each operand holds its f32 value and the sum rounds once to f32, as the kernels compute it.
  EXPECT_EQ(fold_value("f32", 0.1, 0.2, "add(%0, %1)", "f32[]"), double(0.1f + 0.2f));
  EXPECT_EQ(fold_value("f64", 0.1, 0.2, "add(%0, %1)", "f64[]"), 0.1 + 0.2);
  EXPECT_EQ(fold_value("f32", 1, 3, "div(%0, %1)", "f32[]"), double(1.0f / 3.0f));
  EXPECT_EQ(fold_value("f32", 7, 2, "sub(%0, %1)", "f32[]"), 5.0);
  EXPECT_EQ(fold_value("f32", 2, 10, "pow(%0, %1)", "f32[]"), 1024.0);
  EXPECT_EQ(fold_value("f32", 1, 0, "div(%0, %1)", "f32[]"), INFINITY);
}

TEST(Fold, UnaryOps) {
  EXPECT_EQ(fold_value("f32", 0, 0, "exp(%0)", "f32[]"), 1.0);
  EXPECT_EQ(fold_value("f32", 0, 0, "log(%0)", "f32[]"), -INFINITY);
  EXPECT_TRUE(std::isnan(fold_value("f32", -1, 0, "log(%0)", "f32[]")));
  EXPECT_EQ(fold_value("f32", 4, 0, "sqrt(%0)", "f32[]"), 2.0);
  EXPECT_EQ(fold_value("f32", 4, 0, "rsqrt(%0)", "f32[]"), 0.5);
  EXPECT_EQ(fold_value("f32", 4, 0, "reciprocal(%0)", "f32[]"), 0.25);
  EXPECT_EQ(fold_value("f32", 0, 0, "sigmoid(%0)", "f32[]"), 0.5);
  EXPECT_EQ(fold_value("f32", 0, 0, "tanh(%0)", "f32[]"), 0.0);
  EXPECT_EQ(fold_value("f32", 0, 0, "gelu(%0)", "f32[]"), 0.0);
  EXPECT_EQ(fold_value("f32", 0.5, 0, "sin(%0)", "f32[]"), double(float(std::sin(0.5))));
  EXPECT_EQ(fold_value("f32", -3, 0, "relu(%0)", "f32[]"), 0.0);
  EXPECT_EQ(fold_value("f32", -3, 0, "abs(%0)", "f32[]"), 3.0);
  EXPECT_EQ(fold_value("f32", 3, 0, "neg(%0)", "f32[]"), -3.0);
  EXPECT_EQ(fold_value("i64", -3, 0, "neg(%0)", "i64[]"), 3.0);
  EXPECT_EQ(fold_value("i32", -3, 0, "relu(%0)", "i32[]"), 0.0);
}

TEST(Fold, MaximumAndMinimumPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fold_value("f32", nan, 1, "maximum(%0, %1)", "f32[]")));
  EXPECT_TRUE(std::isnan(fold_value("f32", 1, nan, "maximum(%0, %1)", "f32[]")));
  EXPECT_TRUE(std::isnan(fold_value("f32", nan, 1, "minimum(%0, %1)", "f32[]")));
  EXPECT_TRUE(std::isnan(fold_value("f32", 1, nan, "minimum(%0, %1)", "f32[]")));
  EXPECT_EQ(fold_value("f32", 1, 2, "maximum(%0, %1)", "f32[]"), 2.0);
  EXPECT_EQ(fold_value("i32", 1, 2, "minimum(%0, %1)", "i32[]"), 1.0);
  // relu(NaN) is 0 in the kernels (x > 0 ? x : 0); isfinite(NaN) is false.
  EXPECT_EQ(fold_value("f32", nan, 0, "relu(%0)", "f32[]"), 0.0);
  EXPECT_EQ(fold_value("f32", nan, 0, "isfinite(%0)", "bool[]"), 0.0);
  EXPECT_EQ(fold_value("f32", INFINITY, 0, "isfinite(%0)", "bool[]"), 0.0);
  EXPECT_EQ(fold_value("i32", 5, 0, "isfinite(%0)", "bool[]"), 1.0);
}

TEST(Fold, IntegerDivisionTruncatesTowardZero) {
  EXPECT_EQ(fold_value("i32", -7, 2, "div(%0, %1)", "i32[]"), -3.0);
  EXPECT_EQ(fold_value("i64", 7, -2, "div(%0, %1)", "i64[]"), -3.0);
  EXPECT_EQ(fold_value("i32", 7, 2, "div(%0, %1)", "i32[]"), 3.0);
}

TEST(Fold, LeavesIntegerDivisionByZeroAndOverflow) {
  expect_unfolded("i32", 1, 0, "div(%0, %1)", "i32[]");
  expect_unfolded("i64", 0, 0, "div(%0, %1)", "i64[]");
  expect_unfolded("i32", 2147483647, 1, "add(%0, %1)", "i32[]");
  expect_unfolded("i32", -2147483648, -1, "div(%0, %1)", "i32[]");
  expect_unfolded("i32", -2147483648, 0, "neg(%0)", "i32[]");
  // A full stores a double: i64 results beyond 2^53 are not held exactly.
  expect_unfolded("i64", 9007199254740992, 2, "mul(%0, %1)", "i64[]");
}

TEST(Fold, ComparisonsGiveBool) {
  EXPECT_EQ(fold_value("f32", 1, 2, "lt(%0, %1)", "bool[]"), 1.0);
  EXPECT_EQ(fold_value("f32", 1, 2, "ge(%0, %1)", "bool[]"), 0.0);
  EXPECT_EQ(fold_value("i32", 2, 2, "le(%0, %1)", "bool[]"), 1.0);
  EXPECT_EQ(fold_value("bool", 1, 0, "ne(%0, %1)", "bool[]"), 1.0);
  // Compared as f32 values: 0.1 and 0.1000000001 are the same float.
  EXPECT_EQ(fold_value("f32", 0.1, 0.1000000001, "eq(%0, %1)", "bool[]"), 1.0);
}

TEST(Fold, CastsFollowTheKernels) {
  EXPECT_EQ(fold_value("f32", -2.7, 0, "cast(%0) {to=i32}", "i32[]"), -2.0);
  EXPECT_EQ(fold_value("f64", 0.1, 0, "cast(%0) {to=f32}", "f32[]"), double(0.1f));
  EXPECT_EQ(fold_value("f32", 0.5, 0, "cast(%0) {to=bool}", "bool[]"), 1.0);
  EXPECT_EQ(fold_value("i32", 0, 0, "cast(%0) {to=bool}", "bool[]"), 0.0);
  EXPECT_EQ(fold_value("bool", 1, 0, "cast(%0) {to=f64}", "f64[]"), 1.0);
  // NaN and out-of-range values have no integer: left to the kernels, which saturate.
  expect_unfolded("f32", NAN, 0, "cast(%0) {to=i32}", "i32[]");
  expect_unfolded("f64", 1e10, 0, "cast(%0) {to=i32}", "i32[]");
  // f16/bf16 rounding is not computed here.
  expect_unfolded("f32", 0.1, 0, "cast(%0) {to=f16}", "f16[]");
}

TEST(Fold, CastToBoolIsNonzeroInTheSourcePrecision) {
  // 1e-310 is a nonzero f64 that f32 would round to 0: the kernels (eager and compiled) say true.
  EXPECT_EQ(fold_value("f64", 1e-310, 0, "cast(%0) {to=bool}", "bool[]"), 1.0);
  EXPECT_EQ(fold_value("f64", -4.9e-324, 0, "cast(%0) {to=bool}", "bool[]"), 1.0);
  EXPECT_EQ(fold_value("f64", -0.0, 0, "cast(%0) {to=bool}", "bool[]"), 0.0);
  EXPECT_EQ(fold_value("f32", NAN, 0, "cast(%0) {to=bool}", "bool[]"), 1.0);
}

TEST(Fold, Where) {
  ir::Graph g = parse_ok(R"(
    graph @f() {
      %0 = full() {shape=[], dtype=bool, value=1} : bool[]
      %1 = full() {shape=[3], dtype=f32, value=2} : f32[3]
      %2 = full() {shape=[2,1], dtype=f32, value=5} : f32[2,1]
      %3 = where(%0, %1, %2) : f32[2,3]
      return %3
    })");
  run_checked(fold, g, true);
  EXPECT_EQ(full_value(g), 2.0);
  EXPECT_EQ(g.type(g.results()[0]), (TensorType{DType::F32, {2, 3}}));
}

TEST(Fold, BroadcastsToTheResultShape) {
  ir::Graph g = parse_ok(R"(
    graph @f() {
      %0 = full() {shape=[4,1], dtype=f32, value=2} : f32[4,1]
      %1 = full() {shape=[8], dtype=f32, value=3} : f32[8]
      %2 = mul(%0, %1) : f32[4,8]
      %3 = exp(%2) : f32[4,8]
      %4 = log(%3) : f32[4,8]
      return %4
    })");
  run_checked(fold, g, true);
  EXPECT_EQ(g.nodes().size(), 1u);
  EXPECT_EQ(full_value(g), double(std::log(float(std::exp(6.0)))));
  EXPECT_EQ(g.type(g.results()[0]), (TensorType{DType::F32, {4, 8}}));
}

TEST(Fold, ViewsOfAFull) {
  ir::Graph g = parse_ok(R"(
    graph @f() {
      %0 = full() {shape=[4,1], dtype=f16, value=0.1} : f16[4,1]
      %1 = reshape(%0) {shape=[1,4]} : f16[1,4]
      %2 = expand(%1) {shape=[3,4]} : f16[3,4]
      %3 = permute(%2) {perm=[1,0]} : f16[4,3]
      %4 = slice(%3) {start=[0,0], stop=[4,3], step=[2,1]} : f16[2,3]
      return %4
    })");
  EXPECT_EQ(run_checked(fold, g, true),
            "graph @f() {\n  %0 = full() {shape=[2,3], dtype=f16, value=0.1} : f16[2,3]\n"
            "  return %0\n}\n");
}

TEST(Fold, LeavesRandomOpsAndNonConstants) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = full() {shape=[], dtype=i64, value=7} : i64[]
      %1 = full() {shape=[], dtype=i64, value=0} : i64[]
      %2 = rand_uniform(%0, %1) {shape=[4], dtype=f32} : f32[4]
      %3 = full() {shape=[], dtype=f32, value=1} : f32[]
      %4 = add(%x, %3) : f32[4]
      %5 = sum(%3) {axes=[], keepdim=false} : f32[]
      return %2, %4, %5
    })");
  run_checked(fold, g, false);
  EXPECT_EQ(count_ops(g, ir::Op::RandUniform), 1);
}

TEST(Fold, KeepsParametersResultsAndDonations) {
  ir::Graph g = parse_ok(R"(
    graph @f(%w: f32[], %x: f32[]) donate(%w: 1) {
      %0 = full() {shape=[], dtype=f32, value=2} : f32[]
      %1 = mul(%0, %0) : f32[]
      %2 = add(%x, %1) : f32[]
      return %1, %2
    })");
  run_checked(fold, g, true);
  EXPECT_EQ(g.params().size(), 2u);
  EXPECT_EQ(g.params()[1].name, "x");
  EXPECT_EQ(full_value(g, 0), 4.0);
  ASSERT_EQ(g.donations().size(), 1u);
  EXPECT_EQ(g.donations()[0], (ir::Donation{0, 1}));
}

TEST(Fold, NonFiniteValuesRoundTripThroughText) {
  ir::Graph g = parse_ok(R"(
    graph @f() {
      %0 = full() {shape=[], dtype=f32, value=0} : f32[]
      %1 = log(%0) : f32[]
      %2 = div(%0, %0) : f32[]
      return %1, %2
    })");
  const std::string out = run_checked(fold, g, true);
  EXPECT_NE(out.find("value=-inf"), std::string::npos) << out;
  EXPECT_NE(out.find("nan}"), std::string::npos) << out;  // 0/0 is -nan on x86, as in the kernels
}

}  // namespace
}  // namespace lt::passes
