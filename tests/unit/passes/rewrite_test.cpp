#include "passes/rewrite.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::run_checked;
using Result = std::optional<ir::Value>;

// Test rules. exp(x) -> x and layer_norm(x)#0 -> x are wrong math but keep types, which is all
// the driver checks.
Result drop_exp(const ir::Graph& g, int id, RewriteBuilder&) { return g.node(id).inputs[0]; }
Result drop_neg_neg(const ir::Graph& g, int id, RewriteBuilder&) {
  const ir::Node* p = producer(g, g.node(id).inputs[0]);
  if (p && p->op == ir::Op::Neg) return p->inputs[0];
  return std::nullopt;
}
// sin(x) -> cos(tanh(x)): two new nodes, the replacement last.
Result sin_to_cos_tanh(const ir::Graph& g, int id, RewriteBuilder& b) {
  const ir::Value t = b.add(ir::Op::Tanh, {g.node(id).inputs[0]}, ir::NoAttrs{});
  EXPECT_EQ(b.type(t), g.node(id).types[0]);
  return b.add(ir::Op::Cos, {t}, ir::NoAttrs{});
}
// cos(tanh(x)) -> sqrt(x): fires on the node sin_to_cos_tanh just made.
Result cos_tanh_to_sqrt(const ir::Graph& g, int id, RewriteBuilder& b) {
  const ir::Node* p = producer(g, g.node(id).inputs[0]);
  if (!p || p->op != ir::Op::Tanh) return std::nullopt;
  return b.add(ir::Op::Sqrt, {p->inputs[0]}, ir::NoAttrs{});
}
Result ln_to_x(const ir::Graph& g, int id, RewriteBuilder&) { return g.node(id).inputs[0]; }
// Rewrites log(x) into a fresh log(x) forever: a rule cycle.
Result log_again(const ir::Graph& g, int id, RewriteBuilder& b) {
  return b.add(ir::Op::Log, {g.node(id).inputs[0]}, ir::NoAttrs{});
}
Result wrong_type(const ir::Graph& g, int id, RewriteBuilder& b) {
  return b.add(ir::Op::Sum, {g.node(id).inputs[0]}, ir::ReduceAttrs{});
}

const RewriteRule kRules[] = {{ir::Op::Exp, drop_exp},
                              {ir::Op::Neg, drop_neg_neg},
                              {ir::Op::Sin, sin_to_cos_tanh},
                              {ir::Op::Cos, cos_tanh_to_sqrt},
                              {ir::Op::LayerNorm, ln_to_x}};
bool run(ir::Graph& g) { return rewrite_to_fixpoint(g, kRules); }

TEST(Rewrite, RedirectsUsesAndDropsTheDeadNode) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = add(%0, %0) : f32[4]
      return %1, %0
    })");
  EXPECT_EQ(run_checked(run, g, true),
            "graph @f(%x: f32[4]) {\n  %0 = add(%x, %x) : f32[4]\n  return %0, %x\n}\n");
}

TEST(Rewrite, NothingFiresLeavesTheGraphUntouched) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = neg(%x) : f32[4]
      %1 = log(%x) : f32[4]
      return %0
    })");
  run_checked(run, g, false);
  EXPECT_EQ(count_ops(g, ir::Op::Log), 1);  // dead, but nothing fired: untouched
}

TEST(Rewrite, RulesSeeRewrittenProducers) {
  // neg^5: node 1 becomes x, so node 2 is neg(x) and node 3 sees neg(neg(x)) again.
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = neg(%x) : f32[4]
      %1 = neg(%0) : f32[4]
      %2 = neg(%1) : f32[4]
      %3 = neg(%2) : f32[4]
      %4 = neg(%3) : f32[4]
      return %4
    })");
  EXPECT_EQ(run_checked(run, g, true),
            "graph @f(%x: f32[4]) {\n  %0 = neg(%x) : f32[4]\n  return %0\n}\n");
}

TEST(Rewrite, AddedNodesComeBeforeUsersAndAreRewrittenInTurn) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = sin(%x) : f32[4]
      %1 = mul(%0, %x) : f32[4]
      return %1
    })");
  EXPECT_EQ(run_checked(run, g, true),
            "graph @f(%x: f32[4]) {\n  %0 = sqrt(%x) : f32[4]\n  %1 = mul(%0, %x) : f32[4]\n"
            "  return %1\n}\n");
}

TEST(Rewrite, OtherOutputsOfAMultiOutputNodeStay) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[2,4], %g: f32[4]) {
      %0:3 = layer_norm(%x, %g, %g) {eps=1e-05} : (f32[2,4], f32[2], f32[2])
      %1 = add(%0#0, %x) : f32[2,4]
      return %1, %0#2
    })");
  EXPECT_EQ(run_checked(run, g, true),
            "graph @f(%x: f32[2,4], %g: f32[4]) {\n"
            "  %0:3 = layer_norm(%x, %g, %g) {eps=1e-05} : (f32[2,4], f32[2], f32[2])\n"
            "  %1 = add(%x, %x) : f32[2,4]\n  return %1, %0#2\n}\n");
}

TEST(Rewrite, KeepsParametersResultsAndDonations) {
  ir::Graph g = parse_ok(R"(
    graph @f(%w: f32[4], %unused: f32[], %x: f32[4]) donate(%w: 1, %x: 0) {
      %0 = exp(%w) : f32[4]
      %1 = neg(%0) : f32[4]
      return %x, %1
    })");
  run_checked(run, g, true);
  ASSERT_EQ(g.params().size(), 3u);
  EXPECT_EQ(g.params()[1].name, "unused");
  ASSERT_EQ(g.results().size(), 2u);
  EXPECT_EQ(g.results()[0], ir::Value::param(2));
  ASSERT_EQ(g.donations().size(), 2u);
  EXPECT_EQ(g.donations()[0], (ir::Donation{0, 1}));
  EXPECT_EQ(g.donations()[1], (ir::Donation{2, 0}));
}

TEST(Rewrite, RuleCycleIsAnInternalError) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = log(%x) : f32[4]
      return %0
    })");
  const RewriteRule cycle[] = {{ir::Op::Log, log_again}};
  EXPECT_THROW(rewrite_to_fixpoint(g, cycle), InternalError);
}

TEST(Rewrite, ReplacementOfAnotherTypeIsAnInternalError) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = log(%x) : f32[4]
      return %0
    })");
  const RewriteRule bad[] = {{ir::Op::Log, wrong_type}};
  EXPECT_THROW(rewrite_to_fixpoint(g, bad), InternalError);
}

TEST(Rewrite, LinearInTheNodeCount) {
  // 200k nodes: neg chains collapse in one sweep, so this takes milliseconds; a rebuild per
  // rewrite would be quadratic (minutes).
  constexpr int kNodes = 200000;
  ir::Graph g("big");
  ir::Value v = g.add_param({DType::F32, {4}}, "x");
  for (int i = 0; i < kNodes; ++i) v = g.add(i % 3 == 2 ? ir::Op::Exp : ir::Op::Neg, {v}, {});
  g.set_results({v});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(run(g));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10.0);
  EXPECT_LE(g.nodes().size(), 1u);
  EXPECT_NO_THROW(ir::verify(g));
}

TEST(RewriteHelpers, ToDtypeFollowsTheKernelConversions) {
  EXPECT_EQ(to_dtype(0.1, DType::F32), double(0.1f));
  EXPECT_EQ(to_dtype(0.1, DType::F64), 0.1);
  EXPECT_EQ(to_dtype(2.7, DType::I32), 2.0);
  EXPECT_EQ(to_dtype(-2.7, DType::I64), -2.0);
  EXPECT_EQ(to_dtype(-2147483648.9, DType::I32), -2147483648.0);
  EXPECT_EQ(to_dtype(3e9, DType::I32), std::nullopt);
  EXPECT_EQ(to_dtype(std::nan(""), DType::I64), std::nullopt);
  EXPECT_EQ(to_dtype(0x1p63, DType::I64), std::nullopt);
  EXPECT_EQ(to_dtype(0.5, DType::Bool), 1.0);
  EXPECT_EQ(to_dtype(1e-50, DType::Bool), 1.0);  // nonzero in f64, though (float)1e-50 is 0
  EXPECT_EQ(to_dtype(-0.0, DType::Bool), 0.0);
  EXPECT_EQ(to_dtype(std::nan(""), DType::Bool), 1.0);
  EXPECT_EQ(to_dtype(1.0, DType::F16), std::nullopt);
}

TEST(RewriteHelpers, SplatValueSeesThroughViews) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = full() {shape=[1], dtype=i32, value=3.9} : i32[1]
      %1 = expand(%0) {shape=[4]} : i32[4]
      %2 = reshape(%1) {shape=[2,2]} : i32[2,2]
      %3 = neg(%x) : f32[4]
      %4 = full() {shape=[], dtype=bf16, value=1} : bf16[]
      return %2, %3, %4
    })");
  EXPECT_EQ(splat_value(g, ir::Value::node(2)), 3.0);
  EXPECT_EQ(splat_value(g, ir::Value::node(3)), std::nullopt);
  EXPECT_EQ(splat_value(g, ir::Value::param(0)), std::nullopt);
  EXPECT_EQ(splat_value(g, ir::Value::node(4)), std::nullopt);
}

}  // namespace
}  // namespace lt::passes
