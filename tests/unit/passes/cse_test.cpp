#include "passes/cse.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::run_checked;

TEST(Cse, MergesIdenticalPureNodes) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = exp(%x) : f32[4]
      %2 = add(%0, %1) : f32[4]
      return %2
    })");
  EXPECT_EQ(run_checked(cse, g, true),
            "graph @f(%x: f32[4]) {\n  %0 = exp(%x) : f32[4]\n  %1 = add(%0, %0) : f32[4]\n"
            "  return %1\n}\n");
}

TEST(Cse, MergesChainsInOneRun) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,8]) {
      %0 = sum(%x) {axes=[1], keepdim=true} : f32[4,1]
      %1 = sum(%x) {axes=[1], keepdim=true} : f32[4,1]
      %2 = sub(%x, %0) : f32[4,8]
      %3 = sub(%x, %1) : f32[4,8]
      %4 = mul(%2, %3) : f32[4,8]
      return %4, %3
    })");
  run_checked(cse, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::Sum), 1);
  EXPECT_EQ(count_ops(g, ir::Op::Sub), 1);
  EXPECT_EQ(g.results()[1], g.node(g.results()[0].def).inputs[0]);
}

TEST(Cse, KeepsReducesOverDifferentAxes) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,4]) {
      %0 = sum(%x) {axes=[0], keepdim=false} : f32[4]
      %1 = sum(%x) {axes=[1], keepdim=false} : f32[4]
      %2 = sum(%x) {axes=[1], keepdim=true} : f32[4,1]
      %3 = mean(%x) {axes=[1], keepdim=false} : f32[4]
      return %0, %1, %2, %3
    })");
  run_checked(cse, g, false);
}

TEST(Cse, KeepsDifferentInputsAndEqualParameters) {
  // Two parameters of one type may hold different data; they are never merged.
  ir::Graph g = parse_ok(R"(
    graph @f(%a: f32[4], %b: f32[4]) {
      %0 = exp(%a) : f32[4]
      %1 = exp(%b) : f32[4]
      %2 = sub(%0, %1) : f32[4]
      %3 = sub(%1, %0) : f32[4]
      return %2, %3
    })");
  run_checked(cse, g, false);
}

TEST(Cse, KeepsZeroAndNegativeZeroApart) {
  ir::Graph g = parse_ok(R"(
    graph @f() {
      %0 = full() {shape=[], dtype=f32, value=0} : f32[]
      %1 = full() {shape=[], dtype=f32, value=-0} : f32[]
      %2 = full() {shape=[], dtype=f64, value=0} : f64[]
      %3 = full() {shape=[2], dtype=f32, value=0} : f32[2]
      return %0, %1, %2, %3
    })");
  run_checked(cse, g, false);
}

TEST(Cse, MergesEqualConstants) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[]) {
      %0 = full() {shape=[], dtype=f32, value=nan} : f32[]
      %1 = full() {shape=[], dtype=f32, value=nan} : f32[]
      %2 = add(%x, %0) : f32[]
      %3 = add(%x, %1) : f32[]
      return %2, %3
    })");
  run_checked(cse, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::Full), 1);
  EXPECT_EQ(g.results()[0], g.results()[1]);
}

TEST(Cse, RandomOpsMergeOnlyWithEqualKeyAndCounter) {
  ir::Graph g = parse_ok(R"(
    graph @f(%key: i64[], %c0: i64[], %c1: i64[]) {
      %0 = rand_uniform(%key, %c0) {shape=[4], dtype=f32} : f32[4]
      %1 = rand_uniform(%key, %c0) {shape=[4], dtype=f32} : f32[4]
      %2 = rand_uniform(%key, %c1) {shape=[4], dtype=f32} : f32[4]
      %3 = rand_normal(%key, %c0) {shape=[4], dtype=f32} : f32[4]
      return %0, %1, %2, %3
    })");
  run_checked(cse, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::RandUniform), 2);
  EXPECT_EQ(count_ops(g, ir::Op::RandNormal), 1);
  EXPECT_EQ(g.results()[0], g.results()[1]);
  EXPECT_NE(g.results()[0], g.results()[2]);
}

TEST(Cse, MergesMultiOutputNodes) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[2,4], %g: f32[4], %b: f32[4]) {
      %0:3 = layer_norm(%x, %g, %b) {eps=1e-05} : (f32[2,4], f32[2], f32[2])
      %1:3 = layer_norm(%x, %g, %b) {eps=1e-05} : (f32[2,4], f32[2], f32[2])
      %2:3 = layer_norm(%x, %g, %b) {eps=0.001} : (f32[2,4], f32[2], f32[2])
      return %0#0, %1#2, %2#0
    })");
  run_checked(cse, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::LayerNorm), 2);
  EXPECT_EQ(g.results()[1], (ir::Value::node(0, 2)));
}

TEST(Cse, KeepsDonationsAndResultOrder) {
  ir::Graph g = parse_ok(R"(
    graph @f(%w: f32[4], %x: f32[4]) donate(%w: 0, %x: 1) {
      %0 = neg(%x) : f32[4]
      %1 = neg(%x) : f32[4]
      %2 = add(%w, %0) : f32[4]
      return %2, %1
    })");
  run_checked(cse, g, true);
  ASSERT_EQ(g.results().size(), 2u);
  EXPECT_EQ(g.results()[1], ir::Value::node(0));
  ASSERT_EQ(g.donations().size(), 2u);
  EXPECT_EQ(g.donations()[0], (ir::Donation{0, 0}));
  EXPECT_EQ(g.donations()[1], (ir::Donation{1, 1}));
}

}  // namespace
}  // namespace lt::passes
