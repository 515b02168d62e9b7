// The CPU backend's recipe: the stages it runs, in its order, and the plans it makes.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "passes/buffer_plan.h"
#include "tests/unit/passes/pass_test_util.h"

namespace lt::passes {
namespace {

using backends::cpu;
using testing::count_ops;
using testing::parse_ok;

constexpr const char* kStep = R"(
  graph @step(%w: f32[8,4], %x: f32[2,8], %lr: f32[]) donate(%w: 0) {
    %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[2,4]
    %1 = full() {shape=[], dtype=f32, value=2} : f32[]
    %2 = full() {shape=[], dtype=f32, value=0.5} : f32[]
    %3 = mul(%1, %2) : f32[]
    %4 = mul(%0, %3) : f32[2,4]
    %5 = sum(%4) {axes=[0], keepdim=false} : f32[4]
    %6 = sum(%4) {axes=[0], keepdim=false} : f32[4]
    %7 = add(%5, %6) : f32[4]
    %8 = reshape(%7) {shape=[1,4]} : f32[1,4]
    %9 = reshape(%8) {shape=[4]} : f32[4]
    %10 = expand(%9) {shape=[8,4]} : f32[8,4]
    %11 = mul(%10, %lr) : f32[8,4]
    %12 = sub(%w, %11) : f32[8,4]
    %13 = exp(%x) : f32[2,8]
    return %12
  })";

std::vector<std::string> names(const PassLog& log) {
  std::vector<std::string> n;
  for (const PassRecord& r : log.records()) n.push_back(r.name);
  return n;
}

TEST(Pipeline, RunsTheStagesInOrderAndSimplifies) {
  PassLogOptions opt;
  opt.verify = true;
  PassLog log(opt);
  const LoweredGraph l = cpu().lower(parse_ok(kStep), {}, log);
  EXPECT_EQ(names(log),
            (std::vector<std::string>{
                "verify", "canonicalize", "fold", "canonicalize", "cse", "channels_last",
                "absorb_widening_casts", "narrow_norm_gradients", "wide_gemm_results",
                "sink_reshapes", "fold_relu_into_pool_grad", "dce", "bucket_all_reduce", "fuse",
                "fuse_view_chains", "fuse_siblings", "attach_epilogues", "order_kernels", "schedule_collectives",
                "buffer_plan"}));
  EXPECT_TRUE(log.changed());
  // 2 * 0.5 folded to 1, then mul by 1 dropped; the two sums merged; the reshapes and exp gone.
  EXPECT_EQ(ir::print(l.graph),
            "graph @step(%w: f32[8,4], %x: f32[2,8], %lr: f32[]) donate(%w: 0) {\n"
            "  %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[2,4]\n"
            "  %1 = sum(%0) {axes=[0], keepdim=false} : f32[4]\n"
            "  %2 = add(%1, %1) : f32[4]\n"
            "  %3 = expand(%2) {shape=[8,4]} : f32[8,4]\n"
            "  %4 = mul(%3, %lr) : f32[8,4]\n"
            "  %5 = sub(%w, %4) : f32[8,4]\n"
            "  return %5\n}\n");
  ASSERT_TRUE(l.fusion && l.buffers);
  EXPECT_EQ(ir::print_fusion_plan(l.graph, *l.fusion),
            ir::print_fusion_plan(l.graph, cpu().fusion_plan(l.graph)));
  EXPECT_EQ(ir::print_buffer_plan(l.graph, *l.buffers),
            ir::print_buffer_plan(
                l.graph, plan_buffers(l.graph, cpu().fusion_plan(l.graph), cpu().rules())));
}

TEST(Pipeline, SecondRunChangesNothing) {
  PassLog first;
  const LoweredGraph once = cpu().lower(parse_ok(kStep), {}, first);
  PassLog second;
  const LoweredGraph twice = cpu().lower(once.graph, {}, second);
  EXPECT_EQ(ir::print(twice.graph), ir::print(once.graph));
  for (const PassRecord& r : second.records()) {
    if (r.name == "fuse" || r.name == "buffer_plan") continue;  // they always make a plan
    EXPECT_FALSE(r.changed) << r.name;
  }
  EXPECT_EQ(ir::print_fusion_plan(twice.graph, *twice.fusion),
            ir::print_fusion_plan(once.graph, *once.fusion));
}

TEST(Pipeline, WithoutSimplifySkipsCanonicalizeFoldAndCse) {
  PassLog log;
  LowerOptions opt;
  opt.simplify = false;
  const LoweredGraph l = cpu().lower(parse_ok(kStep), opt, log);
  EXPECT_EQ(names(log),
            (std::vector<std::string>{"verify", "channels_last", "absorb_widening_casts",
                                      "narrow_norm_gradients", "wide_gemm_results", "dce",
                                      "bucket_all_reduce", "fuse", "fuse_view_chains",
                                      "fuse_siblings", "attach_epilogues", "order_kernels",
                                      "schedule_collectives", "buffer_plan"}));
  EXPECT_EQ(count_ops(l.graph, ir::Op::Exp), 0);
  EXPECT_EQ(count_ops(l.graph, ir::Op::Sum), 2);
}

TEST(Pipeline, OptLevelOneIsTheUnfusedPlan) {
  PassLog log;
  LowerOptions opt;
  opt.fusion.enabled = false;
  const LoweredGraph l = cpu().lower(parse_ok(kStep), opt, log);
  EXPECT_EQ(ir::print_fusion_plan(l.graph, *l.fusion),
            ir::print_fusion_plan(l.graph, ir::unfused_plan(l.graph)));
}

TEST(Pipeline, RejectsAMalformedGraph) {
  ir::Graph g = ir::parse(R"(
    graph @f(%x: f32[4]) {
      %0 = neg(%x) : f32[5]
      return %0
    })");
  PassLog log;
  EXPECT_THROW(cpu().lower(g, {}, log), Error);
}

TEST(Pipeline, RunsStagesByName) {
  PassLogOptions opt;
  opt.verify = true;
  PassLog log(opt);
  LoweredGraph l{parse_ok(kStep), {}, {}};
  const std::vector<std::string> plan_only = {"fuse", "buffer_plan"};
  cpu().run_passes(l, plan_only, {}, log);
  ASSERT_TRUE(l.fusion && l.buffers);
  // A rewrite that changes the graph drops the plans made for the old one.
  const std::vector<std::string> rewrite = {"cse"};
  cpu().run_passes(l, rewrite, {}, log);
  EXPECT_FALSE(l.fusion || l.buffers);
  const std::vector<std::string> pipeline = {"pipeline"};
  cpu().run_passes(l, pipeline, {}, log);
  EXPECT_TRUE(l.fusion && l.buffers);
}

TEST(Pipeline, UnknownOrOutOfOrderStagesAreErrors) {
  PassLog log;
  LoweredGraph l{parse_ok(kStep), {}, {}};
  const std::vector<std::string> unknown = {"cse", "fusion"};
  try {
    cpu().run_passes(l, unknown, {}, log);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown pass 'fusion' (see lt-opt --list-passes)");
  }
  const std::vector<std::string> early = {"buffer_plan"};
  try {
    cpu().run_passes(l, early, {}, log);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pass 'buffer_plan' needs a fusion plan: run 'fuse' before it");
  }
}

}  // namespace
}  // namespace lt::passes
