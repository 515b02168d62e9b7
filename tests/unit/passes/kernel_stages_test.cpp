// The kernel stages after fuse: where collectives are awaited, the order stage, and the rule
// that keeps a node a loop kernel cannot compute out of loop kernels.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "cpu_plans.h"
#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "pass_test_util.h"
#include "passes/collective_schedule.h"
#include "passes/epilogue.h"
#include "passes/fuse.h"
#include "passes/kernel_order.h"

namespace lt::passes {
namespace {

using testing::cpu_rules;
using testing::fusion_plan;
using testing::parse_ok;

// Two gradient all-reduces: %1 is read by the last kernel, %3 by none (a result).
constexpr const char* kTwoCollectives = R"(
  graph @step(%x: f32[8,4], %dy: f32[8,3], %w: f32[3,4], %lr: f32[]) {
    %0 = matmul(%dy, %x) {transpose_a=true, transpose_b=false} : f32[3,4]
    %1 = all_reduce(%0) {reduce=mean} : f32[3,4]
    %2 = sum(%dy) {axes=[0], keepdim=false} : f32[3]
    %3 = all_reduce(%2) {reduce=sum} : f32[3]
    %4 = mul(%1, %lr) : f32[3,4]
    %5 = sub(%w, %4) : f32[3,4]
    return %5, %3
  })";

int group_of(const ir::FusionPlan& plan, int node) {
  for (size_t k = 0; k < plan.groups.size(); ++k)
    for (int id : plan.groups[k].nodes)
      if (id == node) return static_cast<int>(k);
  return -1;
}

TEST(ScheduleCollectives, AwaitsEachBeforeItsFirstReaderOrAtTheEnd) {
  const ir::Graph g = parse_ok(kTwoCollectives);
  ir::FusionPlan plan = fuse(g, cpu_rules());
  order_groups(g, plan);
  EXPECT_TRUE(schedule_collectives(g, plan));
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()));
  const int first = group_of(plan, 1), second = group_of(plan, 3), update = group_of(plan, 4);
  EXPECT_EQ(plan.groups[first].awaited_before, update);
  EXPECT_EQ(plan.groups[second].awaited_before, static_cast<int>(plan.groups.size()));
  for (int k = 0; k < static_cast<int>(plan.groups.size()); ++k) {
    if (k != first && k != second) {
      EXPECT_EQ(plan.groups[k].awaited_before, -1) << k;
    }
  }
  EXPECT_FALSE(schedule_collectives(g, plan));  // idempotent
}

TEST(ScheduleCollectives, NothingToDoWithoutCollectives) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      return %0
    })");
  ir::FusionPlan plan = fuse(g, cpu_rules());
  EXPECT_FALSE(schedule_collectives(g, plan));
}

TEST(ScheduleCollectives, TheVerifierRejectsAReadBeforeTheAwait) {
  const ir::Graph g = parse_ok(kTwoCollectives);
  ir::FusionPlan plan = fusion_plan(g);
  const int first = group_of(plan, 1);
  plan.groups[first].awaited_before = static_cast<int>(plan.groups.size());
  try {
    ir::verify_fusion_plan(g, plan, cpu_rules());
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("before it is awaited"), std::string::npos) << e.what();
  }
  plan.groups[first].awaited_before = -1;
  plan.groups[0].awaited_before = 1;  // the matmul's kernel: not a collective
  EXPECT_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()), InternalError);
}

TEST(OrderKernels, SecondRunKeepsTheOrder) {
  const ir::Graph g = parse_ok(kTwoCollectives);
  ir::FusionPlan plan = fuse(g, cpu_rules());
  order_groups(g, plan);
  const std::string once = ir::print_fusion_plan(g, plan);
  EXPECT_FALSE(order_groups(g, plan));
  EXPECT_EQ(ir::print_fusion_plan(g, plan), once);
}

TEST(FuseSiblings, MergesLoopsReadingOneValueOnceThenChangesNothing) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,8], %y: f32[4,8]) {
      %0 = exp(%x) : f32[4,8]
      %1 = neg(%x) : f32[4,8]
      %2 = neg(%y) : f32[4,8]
      return %0, %1, %2
    })");
  ir::FusionPlan plan = fuse(g, cpu_rules());
  EXPECT_EQ(plan.groups.size(), 3u);
  EXPECT_TRUE(fuse_siblings(g, cpu_rules(), {}, plan));
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()));
  EXPECT_EQ(ir::print_fusion_plan(g, plan),
            "kernel 0 loop f32[4,8]: %0 %1 (in: %x; out: %0, %1)\n"
            "kernel 1 loop f32[4,8]: %2 (in: %y; out: %2)\n");
  EXPECT_FALSE(fuse_siblings(g, cpu_rules(), {}, plan));  // idempotent
}

// Attention's head split: fuse leaves the views no loop kernel reads through as library views;
// fuse_view_chains makes the slice and the permute (each a copy) one copy through their
// composed map, the reshape between them included.
TEST(FuseViewChains, MakesAChainThatCopiesTwiceOneKernelThenChangesNothing) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%qkv: f32[2,8,48], %k: f32[2,4,4,8]) {
      %0 = slice(%qkv) {start=[0,0,0], stop=[2,8,16], step=[1,1,1]} : f32[2,8,16]
      %1 = reshape(%0) {shape=[2,8,4,4]} : f32[2,8,4,4]
      %2 = permute(%1) {perm=[0,2,1,3]} : f32[2,4,8,4]
      %3 = matmul(%2, %k) {transpose_a=false, transpose_b=false} : f32[2,4,8,8]
      return %3
    })");
  ir::FusionPlan plan = fuse(g, cpu_rules());
  EXPECT_EQ(ir::print_fusion_plan(g, plan),
            "kernel 0 library slice: %0 (in: %qkv; out: %0)\n"
            "kernel 1 library reshape: %1 (in: %0; out: %1)\n"
            "kernel 2 library permute: %2 (in: %1; out: %2)\n"
            "kernel 3 library matmul: %3 (in: %2, %k; out: %3)\n");
  EXPECT_TRUE(fuse_view_chains(g, cpu_rules(), {}, plan));
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()));
  EXPECT_EQ(ir::print_fusion_plan(g, plan),
            "kernel 0 loop f32[2,4,8,4]: %0 %1 %2 (in: %qkv; out: %2)\n"
            "kernel 1 library matmul: %3 (in: %2, %k; out: %3)\n");
  EXPECT_FALSE(fuse_view_chains(g, cpu_rules(), {}, plan));  // idempotent
}

// One view that copies, or a copy then reshapes (which the buffer plan aliases), saves nothing
// as a loop kernel; nor does a chain whose views are read twice (each reader needs its value).
TEST(FuseViewChains, LeavesChainsThatCopyOnceOrFork) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[4,8], %k: f32[8,4]) {
      %0 = permute(%x) {perm=[1,0]} : f32[8,4]
      %1 = reshape(%0) {shape=[32]} : f32[32]
      %2 = slice(%x) {start=[0,0], stop=[4,4], step=[1,1]} : f32[4,4]
      %3 = permute(%2) {perm=[1,0]} : f32[4,4]
      %4 = matmul(%2, %3) {transpose_a=false, transpose_b=false} : f32[4,4]
      return %1, %4
    })");
  ir::FusionPlan plan = fuse(g, cpu_rules());
  const std::string before = ir::print_fusion_plan(g, plan);
  EXPECT_FALSE(fuse_view_chains(g, cpu_rules(), {}, plan));
  EXPECT_EQ(ir::print_fusion_plan(g, plan), before);
}

// Both stages rebuild the fuser's state from the plan, which holds no epilogues yet.
TEST(KernelStages, FuseViewChainsAndFuseSiblingsComeBeforeEpilogues) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%a: f32[4,4], %b: f32[4,4]) {
      %0 = matmul(%a, %b) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = relu(%0) : f32[4,4]
      return %1
    })");
  using StageFn = bool (*)(const ir::Graph&, const ir::KernelRules&, const FuseOptions&,
                           ir::FusionPlan&);
  const std::pair<const char*, StageFn> stages[] = {{"fuse_view_chains", fuse_view_chains},
                                                    {"fuse_siblings", fuse_siblings}};
  for (const auto& [name, stage] : stages) {
    SCOPED_TRACE(name);
    ir::FusionPlan plan = fuse(g, cpu_rules());
    ASSERT_EQ(attach_epilogues(g, cpu_rules(), plan), 1);
    try {
      stage(g, cpu_rules(), {}, plan);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("pass '") + name + "' needs the plan before 'attach_epilogues'");
    }
  }
}

// Integer division checks its divisor in its eager kernel (a loop kernel cannot throw), so it is
// a library kernel of its own and the ops around it still fuse.
TEST(Fuse, IntegerDivisionIsALibraryKernelBetweenLoops) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%a: i64[16], %b: i64[16]) {
      %0 = add(%a, %b) : i64[16]
      %1 = div(%0, %b) : i64[16]
      %2 = mul(%1, %a) : i64[16]
      return %2
    })");
  const ir::FusionPlan plan = fuse(g, cpu_rules());
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()));
  EXPECT_EQ(ir::print_fusion_plan(g, plan),
            "kernel 0 loop i64[16]: %0 (in: %a, %b; out: %0)\n"
            "kernel 1 library div: %1 (in: %0, %b; out: %1)\n"
            "kernel 2 loop i64[16]: %2 (in: %1, %a; out: %2)\n");
}

// The verifier holds a plan to the rules of the backend that made it: a loop kernel may hold no
// node the rules do not compute, nor end in a reduction they do not take on.
TEST(VerifyKernelRules, RejectsWhatTheRulesDoNotTakeOn) {
  const ir::Graph g = parse_ok(R"(
    graph @f(%a: i64[16], %b: i64[16], %x: f32[4,1]) {
      %0 = div(%a, %b) : i64[16]
      %1 = sum(%x) {axes=[1], keepdim=false} : f32[4]
      return %0, %1
    })");
  ir::FusionPlan one_loop = ir::unfused_plan(g);
  one_loop.groups[0].kind = ir::KernelKind::Loop;
  one_loop.groups[0].shape = {16};
  try {
    ir::verify_fusion_plan(g, one_loop, cpu_rules());
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(),
                 "invalid fusion plan: loop kernel 0 ([16]) holds %0 = div(%a, %b) : i64[16], "
                 "which the cpu backend's loop kernels do not compute");
  }
  ir::FusionPlan reduces_one = ir::unfused_plan(g);
  reduces_one.groups[1].kind = ir::KernelKind::Loop;
  reduces_one.groups[1].shape = {4, 1};
  try {
    ir::verify_fusion_plan(g, reduces_one, cpu_rules());
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("nor a reduction it can end in"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, fuse(g, cpu_rules()), cpu_rules()));
}

}  // namespace
}  // namespace lt::passes
