#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "pass_test_util.h"

namespace lt::passes {
namespace {

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

TEST(Pipeline, RunsThePassesInOrderAndSimplifies) {
  ir::Graph g = parse_ok(kStep);
  PassLogOptions opt;
  opt.verify = true;
  PassLog log(opt);
  run_pipeline(g, {}, log);
  EXPECT_EQ(names(log), (std::vector<std::string>{"verify", "canonicalize", "fold",
                                                  "canonicalize", "cse", "dce"}));
  EXPECT_TRUE(log.changed());
  // 2 * 0.5 folded to 1, then mul by 1 dropped; the two sums merged; the reshapes and exp gone.
  EXPECT_EQ(ir::print(g),
            "graph @step(%w: f32[8,4], %x: f32[2,8], %lr: f32[]) donate(%w: 0) {\n"
            "  %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[2,4]\n"
            "  %1 = sum(%0) {axes=[0], keepdim=false} : f32[4]\n"
            "  %2 = add(%1, %1) : f32[4]\n"
            "  %3 = expand(%2) {shape=[8,4]} : f32[8,4]\n"
            "  %4 = mul(%3, %lr) : f32[8,4]\n"
            "  %5 = sub(%w, %4) : f32[8,4]\n"
            "  return %5\n}\n");
}

TEST(Pipeline, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(kStep);
  EXPECT_TRUE(run_default_pipeline(g));
  const std::string once = ir::print(g);
  EXPECT_FALSE(run_default_pipeline(g));
  EXPECT_EQ(ir::print(g), once);
}

TEST(Pipeline, WithoutSimplifyOnlyVerifiesAndDropsDeadCode) {
  ir::Graph g = parse_ok(kStep);
  PassLog log;
  PipelineOptions opt;
  opt.simplify = false;
  run_pipeline(g, opt, log);
  EXPECT_EQ(names(log), (std::vector<std::string>{"verify", "dce"}));
  EXPECT_EQ(count_ops(g, ir::Op::Exp), 0);
  EXPECT_EQ(count_ops(g, ir::Op::Sum), 2);
}

TEST(Pipeline, RejectsAMalformedGraph) {
  ir::Graph g = ir::parse(R"(
    graph @f(%x: f32[4]) {
      %0 = neg(%x) : f32[5]
      return %0
    })");
  PassLog log;
  EXPECT_THROW(run_pipeline(g, {}, log), Error);
}

}  // namespace
}  // namespace lt::passes
