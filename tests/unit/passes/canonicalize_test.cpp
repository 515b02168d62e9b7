#include "passes/canonicalize.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::run_checked;

// The graph's only result after canonicalize, as text ("%x" when it folded down to a parameter).
std::string result_after(std::string_view text) {
  ir::Graph g = parse_ok(text);
  run_checked(canonicalize, g, true);
  return ir::value_name(g, g.results()[0]);
}

// %0 is a scalar 1, %1 a -0.0 and %2 a +0.0 of shape [8]: all broadcast into x's type f32[4,8].
std::string with_constants(const char* expr) {
  return std::string(R"(
    graph @f(%x: f32[4,8]) {
      %0 = full() {shape=[], dtype=f32, value=1} : f32[]
      %1 = full() {shape=[8], dtype=f32, value=-0} : f32[8]
      %2 = full() {shape=[8], dtype=f32, value=0} : f32[8]
      %3 = )") + expr + R"( : f32[4,8]
      return %3
    })";
}

TEST(Canonicalize, ArithmeticIdentities) {
  for (const char* expr : {"mul(%x, %0)", "mul(%0, %x)", "add(%x, %1)", "add(%1, %x)",
                           "sub(%x, %2)", "div(%x, %0)"}) {
    EXPECT_EQ(result_after(with_constants(expr)), "%x") << expr;
  }
}

TEST(Canonicalize, KeepsFloatAddOfPositiveZero) {
  // -0.0 + 0.0 and -0.0 - (-0.0) are +0.0: neither is x for x = -0.0.
  for (const char* expr : {"add(%x, %2)", "add(%2, %x)", "sub(%x, %1)"}) {
    ir::Graph g = parse_ok(with_constants(expr));
    run_checked(canonicalize, g, false);
  }
}

TEST(Canonicalize, IntegerZeroAfterTruncation) {
  // An i32 full of 0.5 holds 0 (conversion truncates), so it is an additive identity.
  EXPECT_EQ(result_after(R"(
    graph @f(%x: i32[4]) {
      %0 = full() {shape=[], dtype=i32, value=0.5} : i32[]
      %1 = add(%x, %0) : i32[4]
      return %1
    })"), "%x");
}

TEST(Canonicalize, SeesConstantsThroughViews) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[8]) {
      %0 = full() {shape=[], dtype=f32, value=1} : f32[]
      %1 = expand(%0) {shape=[8]} : f32[8]
      %2 = mul(%x, %1) : f32[8]
      return %2
    })"), "%x");
}

TEST(Canonicalize, MulByOnesOfBiggerShapeIsABroadcastNotX) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[8]) {
      %0 = full() {shape=[4,8], dtype=f32, value=1} : f32[4,8]
      %1 = mul(%x, %0) : f32[4,8]
      %2 = add(%0, %x) : f32[4,8]
      return %1, %2
    })");
  run_checked(canonicalize, g, false);
}

TEST(Canonicalize, KeepsNonIdentities) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4], %y: f32[4]) {
      %0 = full() {shape=[], dtype=f32, value=2} : f32[]
      %1 = full() {shape=[], dtype=f32, value=0} : f32[]
      %2 = full() {shape=[], dtype=f32, value=1} : f32[]
      %3 = mul(%x, %0) : f32[4]
      %4 = sub(%1, %x) : f32[4]
      %5 = div(%2, %x) : f32[4]
      %6 = neg(%x) : f32[4]
      %7 = add(%x, %y) : f32[4]
      return %3, %4, %5, %6, %7
    })");
  run_checked(canonicalize, g, false);
}

TEST(Canonicalize, NegOfNeg) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4]) {
      %0 = neg(%x) : f32[4]
      %1 = neg(%0) : f32[4]
      %2 = neg(%1) : f32[4]
      %3 = neg(%2) : f32[4]
      return %3
    })"), "%x");
}

TEST(Canonicalize, ReshapeOfReshapeKeepsTheFinalShape) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,8]) {
      %0 = reshape(%x) {shape=[32]} : f32[32]
      %1 = reshape(%0) {shape=[2,16]} : f32[2,16]
      %2 = reshape(%1) {shape=[8,4]} : f32[8,4]
      return %2
    })");
  EXPECT_EQ(run_checked(canonicalize, g, true),
            "graph @f(%x: f32[4,8]) {\n  %0 = reshape(%x) {shape=[8,4]} : f32[8,4]\n"
            "  return %0\n}\n");
}

TEST(Canonicalize, ReshapeBackToTheSameShapeVanishes) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4,8]) {
      %0 = reshape(%x) {shape=[32]} : f32[32]
      %1 = reshape(%0) {shape=[4,8]} : f32[4,8]
      return %1
    })"), "%x");
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4,8]) {
      %0 = reshape(%x) {shape=[4,8]} : f32[4,8]
      return %0
    })"), "%x");
}

TEST(Canonicalize, PermuteOfPermuteComposes) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[2,3,4]) {
      %0 = permute(%x) {perm=[1,2,0]} : f32[3,4,2]
      %1 = permute(%0) {perm=[1,0,2]} : f32[4,3,2]
      return %1
    })");
  // out.dim[i] = in.dim[perm[i]]: composed perm c[i] = inner[outer[i]] = [2,1,0].
  EXPECT_EQ(run_checked(canonicalize, g, true),
            "graph @f(%x: f32[2,3,4]) {\n  %0 = permute(%x) {perm=[2,1,0]} : f32[4,3,2]\n"
            "  return %0\n}\n");
}

TEST(Canonicalize, InversePermutesAndIdentityPermuteVanish) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[2,3,4]) {
      %0 = permute(%x) {perm=[1,2,0]} : f32[3,4,2]
      %1 = permute(%0) {perm=[2,0,1]} : f32[2,3,4]
      return %1
    })"), "%x");
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[2,3]) {
      %0 = permute(%x) {perm=[0,1]} : f32[2,3]
      return %0
    })"), "%x");
}

TEST(Canonicalize, Expand) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4,8]) {
      %0 = expand(%x) {shape=[4,8]} : f32[4,8]
      return %0
    })"), "%x");
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[8]) {
      %0 = expand(%x) {shape=[1,8]} : f32[1,8]
      %1 = expand(%0) {shape=[3,4,8]} : f32[3,4,8]
      return %1
    })");
  EXPECT_EQ(run_checked(canonicalize, g, true),
            "graph @f(%x: f32[8]) {\n  %0 = expand(%x) {shape=[3,4,8]} : f32[3,4,8]\n"
            "  return %0\n}\n");
}

TEST(Canonicalize, Casts) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4]) {
      %0 = cast(%x) {to=f32} : f32[4]
      return %0
    })"), "%x");
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4]) {
      %0 = cast(%x) {to=f64} : f64[4]
      %1 = cast(%0) {to=f32} : f32[4]
      return %1
    })"), "%x");
  EXPECT_EQ(result_after(R"(
    graph @f(%x: i32[4]) {
      %0 = cast(%x) {to=i64} : i64[4]
      %1 = cast(%0) {to=i32} : i32[4]
      return %1
    })"), "%x");
}

TEST(Canonicalize, KeepsLossyCastRoundTrips) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f64[4], %y: f32[4], %z: f32[4]) {
      %0 = cast(%x) {to=f32} : f32[4]
      %1 = cast(%0) {to=f64} : f64[4]
      %2 = cast(%y) {to=i32} : i32[4]
      %3 = cast(%2) {to=f32} : f32[4]
      %4 = cast(%z) {to=f16} : f16[4]
      %5 = cast(%4) {to=f32} : f32[4]
      %6 = cast(%y) {to=f64} : f64[4]
      %7 = cast(%6) {to=i32} : i32[4]
      return %1, %3, %5, %7
    })");
  run_checked(canonicalize, g, false);
}

TEST(Canonicalize, SliceThatTakesEverything) {
  EXPECT_EQ(result_after(R"(
    graph @f(%x: f32[4,1]) {
      %0 = slice(%x) {start=[0,0], stop=[4,1], step=[1,3]} : f32[4,1]
      return %0
    })"), "%x");
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,8]) {
      %0 = slice(%x) {start=[0,0], stop=[4,8], step=[1,2]} : f32[4,4]
      %1 = slice(%x) {start=[1,0], stop=[4,8], step=[1,1]} : f32[3,8]
      %2 = slice(%x) {start=[0,0], stop=[4,7], step=[1,1]} : f32[4,7]
      return %0, %1, %2
    })");
  run_checked(canonicalize, g, false);
}

TEST(Canonicalize, KeepsDonationsAndResultOrder) {
  ir::Graph g = parse_ok(R"(
    graph @f(%w: f32[4], %x: f32[4]) donate(%w: 1) {
      %0 = full() {shape=[], dtype=f32, value=-0} : f32[]
      %1 = add(%x, %0) : f32[4]
      %2 = neg(%w) : f32[4]
      %3 = neg(%2) : f32[4]
      %4 = mul(%3, %x) : f32[4]
      return %1, %4
    })");
  const std::string out = run_checked(canonicalize, g, true);
  ASSERT_EQ(g.results().size(), 2u);
  EXPECT_EQ(ir::value_name(g, g.results()[0]), "%x");
  ASSERT_EQ(g.donations().size(), 1u);
  EXPECT_EQ(g.donations()[0], (ir::Donation{0, 1}));
  EXPECT_NE(out.find("donate(%w: 1)"), std::string::npos) << out;
  EXPECT_EQ(count_ops(g, ir::Op::Neg), 0);
}

TEST(Canonicalize, DeadNodesStayWhenNothingFires) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%x) : f32[4]
      return %1
    })");
  run_checked(canonicalize, g, false);
  EXPECT_EQ(count_ops(g, ir::Op::Exp), 1);  // dropping dead code is dce's job
}

}  // namespace
}  // namespace lt::passes
