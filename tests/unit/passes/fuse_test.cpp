#include "passes/fuse.h"
#include "passes/epilogue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cpu_plans.h"
#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/loop_kernel.h"
#include "ir/parser.h"

namespace lt::passes {
namespace {

using ir::KernelKind;
using ir::Value;
using testing::cpu_rules;
using testing::fusion_plan;
using ::testing::HasSubstr;

// Parses, verifies, fuses, checks the plan against the contract and returns it as text.
std::string plan_of(std::string_view text, FuseOptions o = {}) {
  const ir::Graph g = ir::parse(text);
  ir::verify(g);
  const ir::FusionPlan plan = fusion_plan(g, o);
  ir::verify_fusion_plan(g, plan, cpu_rules());
  return ir::print_fusion_plan(g, plan);
}

// The message verify_fusion_plan throws, or "" when it accepts the plan.
std::string rejection(const ir::Graph& g, const ir::FusionPlan& plan) {
  try {
    ir::verify_fusion_plan(g, plan, cpu_rules());
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

TEST(Fuse, ChainBecomesOneLoopKernel) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[4,8]) {
      %0 = add(%x, %y) : f32[4,8]
      %1 = exp(%0) : f32[4,8]
      %2 = mul(%1, %x) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 %2 (in: %x, %y; out: %2)\n");
}

// The loop after the matmul becomes its epilogue; the one before stays a kernel of its own.
TEST(Fuse, MatMulBreaksAChain) {
  const char* text = R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = exp(%x) : f32[4,4]
      %1 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %2 = relu(%1) : f32[4,4]
      %3 = neg(%2) : f32[4,4]
      return %3
    })";
  EXPECT_EQ(plan_of(text, {.epilogues = false}),
            "kernel 0 loop f32[4,4]: %0 (in: %x; out: %0)\n"
            "kernel 1 library matmul: %1 (in: %0, %w; out: %1)\n"
            "kernel 2 loop f32[4,4]: %2 %3 (in: %1; out: %3)\n");
  EXPECT_EQ(plan_of(text),
            "kernel 0 loop f32[4,4]: %0 (in: %x; out: %0)\n"
            "kernel 1 matmul+loop f32[4,4]: %1 %2 %3 (in: %0, %w; out: %3)\n");
}

// %2 reads %0 directly and through the logsumexp (a library kernel): joining %0's kernel would
// make that kernel both feed and wait for it.
TEST(Fuse, NoCycleThroughALibraryKernel) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = exp(%x) : f32[4,8]
      %1 = logsumexp(%0) {axes=[1], keepdim=true} : f32[4,1]
      %2 = sub(%0, %1) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 (in: %x; out: %0)\n"
            "kernel 1 library logsumexp: %1 (in: %0; out: %1)\n"
            "kernel 2 loop f32[4,8]: %2 (in: %0, %1; out: %2)\n");
}

// The cycle is between kernels, not nodes: %0 -> matmul -> %3 (kernel B), and %5 reads %4, also
// in kernel B, though %4 does not depend on %3. With B full, %5 may not join %0's kernel either.
TEST(Fuse, NoCycleBetweenKernelsThatNodesAloneDoNotShow) {
  const char* text = R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = exp(%x) : f32[4,4]
      %1 = neg(%w) : f32[4,4]
      %2 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %3 = add(%1, %2) : f32[4,4]
      %4 = sin(%1) : f32[4,4]
      %5 = mul(%0, %4) : f32[4,4]
      return %3, %5
    })";
  EXPECT_EQ(plan_of(text, {.max_nodes_per_kernel = 3, .epilogues = false}),
            "kernel 0 loop f32[4,4]: %0 (in: %x; out: %0)\n"
            "kernel 1 library matmul: %2 (in: %0, %w; out: %2)\n"
            "kernel 2 loop f32[4,4]: %1 %3 %4 (in: %w, %2; out: %3, %4)\n"
            "kernel 3 loop f32[4,4]: %5 (in: %0, %4; out: %5)\n");
  // With room, %5 joins kernel B (the legal side) instead.
  EXPECT_THAT(plan_of(text, {.epilogues = false}),
              HasSubstr("loop f32[4,4]: %1 %3 %4 %5 (in: %w, %2, %0; out: %3, %5)"));
}

TEST(Fuse, DifferentShapesMakeSeparateKernels) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8], %y: f32[4,8]) {
      %0 = exp(%x) : f32[8]
      %1 = add(%0, %y) : f32[4,8]
      %2 = neg(%1) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[8]: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[4,8]: %1 %2 (in: %0, %y; out: %2)\n");
}

TEST(Fuse, BroadcastInputsJoinTheLoop) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %lr: f32[], %b: f32[8], %c: f32[4,1]) {
      %0 = mul(%x, %lr) : f32[4,8]
      %1 = add(%0, %b) : f32[4,8]
      %2 = sub(%1, %c) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 %2 (in: %x, %lr, %b, %c; out: %2)\n");
}

TEST(Fuse, ExpandIsAbsorbed) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %b: f32[8]) {
      %0 = expand(%b) {shape=[4,8]} : f32[4,8]
      %1 = add(%x, %0) : f32[4,8]
      %2 = relu(%1) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 %2 (in: %b, %x; out: %2)\n");
  // The expand's operand comes from a smaller kernel: it starts the bigger one.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %b: f32[8]) {
      %0 = neg(%b) : f32[8]
      %1 = expand(%0) {shape=[4,8]} : f32[4,8]
      %2 = add(%x, %1) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[8]: %0 (in: %b; out: %0)\n"
            "kernel 1 loop f32[4,8]: %1 %2 (in: %0, %x; out: %2)\n");
}

TEST(Fuse, ResultsAndValuesReadElsewhereAreOutputs) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = exp(%x) : f32[4,4]
      %1 = neg(%0) : f32[4,4]
      %2 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %3 = add(%1, %x) : f32[4,4]
      return %3, %1, %3, %x, %2
    })"),
            "kernel 0 loop f32[4,4]: %0 %1 %3 (in: %x; out: %0, %1, %3)\n"
            "kernel 1 library matmul: %2 (in: %0, %w; out: %2)\n");
}

TEST(Fuse, JoinsEveryProducerKernelItCan) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4], %y: f32[4], %c: bool[4]) {
      %0 = exp(%x) : f32[4]
      %1 = log(%y) : f32[4]
      %2 = where(%c, %0, %1) : f32[4]
      return %2
    })"),
            "kernel 0 loop f32[4]: %0 %1 %2 (in: %x, %y, %c; out: %2)\n");
}

TEST(Fuse, SiblingsReadingTheSameTensorMerge) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = exp(%x) : f32[4,8]
      %1 = neg(%x) : f32[4,8]
      return %0, %1
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 (in: %x; out: %0, %1)\n");
  // Sharing a scalar is no reason to merge.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[4,8], %lr: f32[]) {
      %0 = mul(%x, %lr) : f32[4,8]
      %1 = mul(%y, %lr) : f32[4,8]
      return %0, %1
    })"),
            "kernel 0 loop f32[4,8]: %0 (in: %x, %lr; out: %0)\n"
            "kernel 1 loop f32[4,8]: %1 (in: %y, %lr; out: %1)\n");
}

// relu forward and its backward mask both read %h, but the backward needs the forward's matmul:
// merging them would be a cycle, and the mask stays fused into its where.
TEST(Fuse, SiblingsJoinedThroughAnotherKernelStayApart) {
  EXPECT_EQ(plan_of(R"(graph @f(%h: f32[4,4], %w: f32[4,4]) {
      %0 = relu(%h) : f32[4,4]
      %1 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %2 = full() {shape=[], dtype=f32, value=0} : f32[]
      %3 = gt(%h, %2) : bool[4,4]
      %4 = where(%3, %1, %2) : f32[4,4]
      return %4
    })", {.epilogues = false}),
            "kernel 0 loop f32[4,4]: %0 (in: %h; out: %0)\n"
            "kernel 1 library matmul: %1 (in: %0, %w; out: %1)\n"
            "kernel 2 library full: %2 (in: -; out: %2)\n"
            "kernel 3 loop f32[4,4]: %3 %4 (in: %h, %2, %1; out: %4)\n");
}

TEST(Fuse, MaxNodesPerKernelSplitsLongChains) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%0) : f32[4]
      %2 = sin(%1) : f32[4]
      %3 = cos(%2) : f32[4]
      %4 = abs(%3) : f32[4]
      return %4
    })",
                    {.max_nodes_per_kernel = 2}),
            "kernel 0 loop f32[4]: %0 %1 (in: %x; out: %1)\n"
            "kernel 1 loop f32[4]: %2 %3 (in: %1; out: %3)\n"
            "kernel 2 loop f32[4]: %4 (in: %3; out: %4)\n");
}

TEST(Fuse, EverythingLibrary) {
  const char* text = R"(graph @f(%x: f32[4,8], %w: f32[8,8]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,8]
      %1 = logsumexp(%0) {axes=[0], keepdim=false} : f32[8]
      %2 = reshape(%1) {shape=[2,4]} : f32[2,4]
      %3 = full() {shape=[], dtype=f32, value=1} : f32[]
      %4:3 = layer_norm(%0, %1, %1) {eps=1e-05} : (f32[4,8], f32[4], f32[4])
      return %2, %3, %4#0, %4#2
    })";
  EXPECT_EQ(plan_of(text),
            "kernel 0 library matmul: %0 (in: %x, %w; out: %0)\n"
            "kernel 1 library logsumexp: %1 (in: %0; out: %1)\n"
            "kernel 2 library reshape: %2 (in: %1; out: %2)\n"
            "kernel 3 library full: %3 (in: -; out: %3)\n"
            "kernel 4 library layer_norm: %4 (in: %0, %1; out: %4#0, %4#2)\n");
  const ir::Graph g = ir::parse(text);
  EXPECT_EQ(ir::print_fusion_plan(g, fusion_plan(g)), ir::print_fusion_plan(g, ir::unfused_plan(g)));
}

TEST(Fuse, DisabledGivesTheUnfusedPlan) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%0) : f32[4]
      return %1
    })");
  const ir::FusionPlan plan = fusion_plan(g, {.enabled = false});
  EXPECT_NO_THROW(ir::verify_fusion_plan(g, plan, cpu_rules()));
  EXPECT_EQ(ir::print_fusion_plan(g, plan),
            "kernel 0 library exp: %0 (in: %x; out: %0)\n"
            "kernel 1 library neg: %1 (in: %0; out: %1)\n");
  EXPECT_EQ(ir::print_fusion_plan(g, plan), ir::print_fusion_plan(g, ir::unfused_plan(g)));
}

TEST(Fuse, EmptyGraph) { EXPECT_EQ(plan_of("graph @f(%x: f32[4]) { return %x }"), ""); }

// ---- Views folded into loop kernels ----

TEST(FuseViews, ViewsOfInputsFoldIntoTheirConsumer) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4], %y: f32[4,8]) {
      %0 = permute(%x) {perm=[1,0]} : f32[4,8]
      %1 = add(%0, %y) : f32[4,8]
      return %1
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 (in: %x, %y; out: %1)\n");
  // A chain of views, and a concat of two of them.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[2,3,4], %y: f32[4,5]) {
      %0 = reshape(%x) {shape=[6,4]} : f32[6,4]
      %1 = permute(%0) {perm=[1,0]} : f32[4,6]
      %2 = slice(%y) {start=[0,1], stop=[4,5], step=[1,2]} : f32[4,2]
      %3 = concat(%1, %2) {axis=1} : f32[4,8]
      %4 = exp(%3) : f32[4,8]
      return %4
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 %2 %3 %4 (in: %x, %y; out: %4)\n");
}

// Views no kernel reads: one view is a library view (no compile for a copy); a chain that would
// copy twice is one loop kernel through the composed map; a copy and a reshape stay library
// views (a reshape counts as no copy: the buffer plan aliases one of an intermediate that is not
// a result).
TEST(FuseViews, AViewChainNoKernelReadsCopiesOnce) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4]) {
      %0 = permute(%x) {perm=[1,0]} : f32[4,8]
      return %0
    })"),
            "kernel 0 library permute: %0 (in: %x; out: %0)\n");
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4]) {
      %0 = permute(%x) {perm=[1,0]} : f32[4,8]
      %1 = slice(%0) {start=[0,0], stop=[4,4], step=[1,1]} : f32[4,4]
      return %1
    })"),
            "kernel 0 loop f32[4,4]: %0 %1 (in: %x; out: %1)\n");
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4]) {
      %0 = slice(%x) {start=[0,0], stop=[8,2], step=[1,1]} : f32[8,2]
      %1 = reshape(%0) {shape=[16]} : f32[16]
      return %1
    })"),
            "kernel 0 library slice: %0 (in: %x; out: %0)\n"
            "kernel 1 library reshape: %1 (in: %0; out: %1)\n");
}

// Not every reshape is an affine map: merging the dims of a transposed layout is not, nor is a
// reshape across a pad's bounds. The view chain is cut before the view that breaks it: the
// permute runs as a copy, and the reshape of that contiguous copy folds into the consumer.
TEST(FuseViews, AReshapeOfAStridedLayoutDoesNotFold) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[32]) {
      %0 = permute(%x) {perm=[1,0]} : f32[8,4]
      %1 = reshape(%0) {shape=[32]} : f32[32]
      %2 = add(%1, %y) : f32[32]
      return %2
    })"),
            "kernel 0 library permute: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[32]: %1 %2 (in: %0, %y; out: %2)\n");
  // Splitting a dim keeps a transposed layout affine: [8,4] -> [2,4,4].
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[2,4,4]) {
      %0 = permute(%x) {perm=[1,0]} : f32[8,4]
      %1 = reshape(%0) {shape=[2,4,4]} : f32[2,4,4]
      %2 = add(%1, %y) : f32[2,4,4]
      return %2
    })"),
            "kernel 0 loop f32[2,4,4]: %0 %1 %2 (in: %x, %y; out: %2)\n");
}

// A view of a value the kernel computes would recompute the producer at other indices: the
// producer's kernel writes it and the view folds into the consumer's kernel instead.
TEST(FuseViews, AViewOfAComputedValueFoldsIntoTheNextKernel) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[8,4]) {
      %0 = exp(%x) : f32[4,8]
      %1 = permute(%0) {perm=[1,0]} : f32[8,4]
      %2 = add(%1, %y) : f32[8,4]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[8,4]: %1 %2 (in: %0, %y; out: %2)\n");
  // ... also when the consumer reads the value directly too: it cannot join the producer.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,4]) {
      %0 = exp(%x) : f32[4,4]
      %1 = permute(%0) {perm=[1,0]} : f32[4,4]
      %2 = add(%0, %1) : f32[4,4]
      return %2
    })"),
            "kernel 0 loop f32[4,4]: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[4,4]: %1 %2 (in: %0; out: %2)\n");
}

// A reshape keeps the element order: it aliases a computed value, and the kernel writes it.
TEST(FuseViews, AReshapeOfAComputedValueIsAnAlias) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %w: f32[32,2]) {
      %0 = exp(%x) : f32[4,8]
      %1 = reshape(%0) {shape=[1,32]} : f32[1,32]
      %2 = matmul(%1, %w) {transpose_a=false, transpose_b=false} : f32[1,2]
      return %2
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 (in: %x; out: %1)\n"
            "kernel 1 library matmul: %2 (in: %1, %w; out: %2)\n");
}

// A folded view the kernel has to write (read twice, here by a library op too) must have the
// iteration shape; else the view is a library node that both kernels read.
TEST(FuseViews, AViewReadTwiceFoldsOnlyAtTheIterationShape) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4], %y: f32[4,8], %w: f32[8,8]) {
      %0 = permute(%x) {perm=[1,0]} : f32[4,8]
      %1 = add(%0, %y) : f32[4,8]
      %2 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[4,8]
      return %1, %2
    })"),
            "kernel 0 loop f32[4,8]: %0 %1 (in: %x, %y; out: %0, %1)\n"
            "kernel 1 library matmul: %2 (in: %0, %w; out: %2)\n");
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4], %y: f32[3,4], %w: f32[4,4]) {
      %0 = reshape(%x) {shape=[1,4]} : f32[1,4]
      %1 = add(%0, %y) : f32[3,4]
      %2 = matmul(%0, %w) {transpose_a=false, transpose_b=false} : f32[1,4]
      return %1, %2
    })"),
            "kernel 0 library reshape: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[3,4]: %1 (in: %0, %y; out: %1)\n"
            "kernel 2 library matmul: %2 (in: %0, %w; out: %2)\n");
}

// A cost rule: on a large tensor, a view that walks the innermost dim across cache lines (a
// transpose) stays the eager kernel's blocked transpose; one that keeps the innermost dim
// contiguous (attention's head permute) folds.
TEST(FuseViews, LargeTransposesStayLibraryViews) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[256,256], %y: f32[256,256]) {
      %0 = permute(%x) {perm=[1,0]} : f32[256,256]
      %1 = add(%0, %y) : f32[256,256]
      return %1
    })"),
            "kernel 0 library permute: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[256,256]: %1 (in: %0, %y; out: %1)\n");
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,64,8,64], %y: f32[4,8,64,64]) {
      %0 = permute(%x) {perm=[0,2,1,3]} : f32[4,8,64,64]
      %1 = add(%0, %y) : f32[4,8,64,64]
      return %1
    })"),
            "kernel 0 loop f32[4,8,64,64]: %0 %1 (in: %x, %y; out: %1)\n");
}

// A donated parameter may be overwritten element by element by the kernel that reads it; a view
// would read other elements, so views of it stay library nodes.
TEST(FuseViews, ViewsOfADonatedParameterDoNotFold) {
  EXPECT_EQ(plan_of(R"(graph @f(%w: f32[4,4], %g: f32[4,4]) donate(%w: 0) {
      %0 = permute(%w) {perm=[1,0]} : f32[4,4]
      %1 = sub(%w, %0) : f32[4,4]
      %2 = add(%1, %g) : f32[4,4]
      return %2
    })"),
            "kernel 0 library permute: %0 (in: %w; out: %0)\n"
            "kernel 1 loop f32[4,4]: %1 %2 (in: %w, %0, %g; out: %2)\n");
}

// ---- Reductions at the end of loop kernels ----

TEST(FuseReductions, AReductionEndsItsPrologueKernel) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %b: f32[8]) {
      %0 = add(%x, %b) : f32[4,8]
      %1 = exp(%0) : f32[4,8]
      %2 = sum(%1) {axes=[1], keepdim=true} : f32[4,1]
      %3 = log(%2) : f32[4,1]
      return %3
    })"),
            "kernel 0 loop f32[4,8] reduce[1]: %0 %1 %2 (in: %x, %b; out: %2)\n"
            "kernel 1 loop f32[4,1]: %3 (in: %2; out: %3)\n");
}

// Nothing in a reducing kernel may read the reduction per element: its consumers start a new
// kernel (the reduction result is written once, then read with stride 0).
TEST(FuseReductions, ConsumersOfTheResultStartANewKernel) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = exp(%x) : f32[4,8]
      %1 = sum(%0) {axes=[1], keepdim=true} : f32[4,1]
      %2 = div(%0, %1) : f32[4,8]
      return %2
    })"),
            "kernel 0 loop f32[4,8] reduce[1]: %0 %1 (in: %x; out: %0, %1)\n"
            "kernel 1 loop f32[4,8]: %2 (in: %0, %1; out: %2)\n");
}

TEST(FuseReductions, OneReductionShapePerKernel) {
  // Same axes: one kernel (siblings too); other axes: another kernel.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = sum(%x) {axes=[1], keepdim=false} : f32[4]
      %1 = max(%x) {axes=[1], keepdim=true} : f32[4,1]
      %2 = mean(%x) {axes=[0], keepdim=false} : f32[8]
      return %0, %1, %2
    })"),
            "kernel 0 loop f32[4,8] reduce[1]: %0 %1 (in: %x; out: %0, %1)\n"
            "kernel 1 loop f32[4,8] reduce[0]: %2 (in: %x; out: %2)\n");
  // The cap.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = sum(%x) {axes=[1], keepdim=false} : f32[4]
      %1 = max(%x) {axes=[1], keepdim=false} : f32[4]
      return %0, %1
    })",
                    {.max_reductions_per_kernel = 1}),
            "kernel 0 loop f32[4,8] reduce[1]: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[4,8] reduce[1]: %1 (in: %x; out: %1)\n");
}

TEST(FuseReductions, ReductionsOfViewsAndBiasGradients) {
  // The reduction reads a transpose; the bias gradient's reshape is an alias of the sum.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[8,4], %g: f32[128,512]) {
      %0 = permute(%x) {perm=[1,0]} : f32[4,8]
      %1 = max(%0) {axes=[1], keepdim=false} : f32[4]
      %2 = sum(%g) {axes=[0], keepdim=true} : f32[1,512]
      %3 = reshape(%2) {shape=[512]} : f32[512]
      return %1, %3
    })"),
            "kernel 0 loop f32[4,8] reduce[1]: %0 %1 (in: %x; out: %1)\n"
            "kernel 1 loop f32[128,512] reduce[0]: %2 %3 (in: %g; out: %3)\n");
}

TEST(FuseReductions, WhatStaysLibrary) {
  // argmax and logsumexp; a reduction of one element per output; bool and empty inputs.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8], %y: f32[4,1], %z: f32[0,3]) {
      %0 = argmax(%x) {axes=[1], keepdim=false} : i64[4]
      %1 = logsumexp(%x) {axes=[1], keepdim=false} : f32[4]
      %2 = sum(%y) {axes=[1], keepdim=false} : f32[4]
      %3 = sum(%z) {axes=[0], keepdim=false} : f32[3]
      return %0, %1, %2, %3
    })"),
            "kernel 0 library argmax: %0 (in: %x; out: %0)\n"
            "kernel 1 library logsumexp: %1 (in: %x; out: %1)\n"
            "kernel 2 library sum: %2 (in: %y; out: %2)\n"
            "kernel 3 library sum: %3 (in: %z; out: %3)\n");
}

// A donated parameter's buffer may hold a result of the kernel that reads it only where each
// element is written where it is read: never for a reduction (a bool [3,4,7] parameter has the
// bytes of the f32 [3,7] sum), so the sum gets a kernel of its own.
TEST(FuseReductions, NoReductionOverTheBufferOfAParameterItReads) {
  EXPECT_EQ(plan_of(R"(graph @f(%m: bool[3,4,7], %x: f32[3,4,7]) donate(%m: 0) {
      %0 = cast(%m) {to=f32} : f32[3,4,7]
      %1 = mul(%0, %x) : f32[3,4,7]
      %2 = sum(%1) {axes=[1], keepdim=false} : f32[3,7]
      return %2
    })"),
            "kernel 0 loop f32[3,4,7]: %0 %1 (in: %m, %x; out: %1)\n"
            "kernel 1 loop f32[3,4,7] reduce[1]: %2 (in: %1; out: %2)\n");
}

// An expensive value read more than once per element of a later kernel (through the broadcast of
// a reduction result, or of a small tensor) is never recomputed: the fuser never duplicates a
// node, so exp is written once and read with stride 0.
TEST(FuseReductions, ExpensiveProducersAreMaterializedOnce) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,8]) {
      %0 = max(%x) {axes=[1], keepdim=true} : f32[4,1]
      %1 = exp(%0) : f32[4,1]
      %2 = expand(%1) {shape=[4,8]} : f32[4,8]
      %3 = mul(%x, %2) : f32[4,8]
      return %3
    })"),
            "kernel 0 loop f32[4,8] reduce[1]: %0 (in: %x; out: %0)\n"
            "kernel 1 loop f32[4,1]: %1 (in: %0; out: %1)\n"
            "kernel 2 loop f32[4,8]: %2 %3 (in: %1, %x; out: %3)\n");
}

class VerifyFusionPlan : public ::testing::Test {
 protected:
  const ir::Graph g_ = ir::parse(R"(graph @f(%x: f32[4,8], %y: f32[8]) {
      %0 = add(%x, %y) : f32[4,8]
      %1 = logsumexp(%0) {axes=[0], keepdim=false} : f32[8]
      %2 = mul(%1, %y) : f32[8]
      return %2
    })");
  // kernel 0 loop f32[4,8]: %0 (in: %x, %y; out: %0)
  // kernel 1 library logsumexp: %1 (in: %0; out: %1)
  // kernel 2 loop f32[8]: %2 (in: %1, %y; out: %2)
  ir::FusionPlan good() const {
    ir::FusionPlan p;
    p.groups = {
        {KernelKind::Loop, {0}, {Value::param(0), Value::param(1)}, {Value::node(0)}, {4, 8}},
        {KernelKind::Library, {1}, {Value::node(0)}, {Value::node(1)}, {}},
        {KernelKind::Loop, {2}, {Value::node(1), Value::param(1)}, {Value::node(2)}, {8}}};
    return p;
  }
};

TEST_F(VerifyFusionPlan, AcceptsAGoodPlanAndTheUnfusedOne) {
  EXPECT_EQ(rejection(g_, good()), "");
  EXPECT_EQ(rejection(g_, ir::unfused_plan(g_)), "");
  EXPECT_EQ(ir::print_fusion_plan(g_, fusion_plan(g_)), ir::print_fusion_plan(g_, good()));
}

TEST_F(VerifyFusionPlan, NodeInNoKernel) {
  ir::FusionPlan p = good();
  p.groups.pop_back();
  EXPECT_EQ(rejection(g_, p),
            "invalid fusion plan: node %2 = mul(%1, %y) : f32[8] is in no kernel");
}

TEST_F(VerifyFusionPlan, NodeInTwoKernels) {
  ir::FusionPlan p = good();
  p.groups[2].nodes = {1, 2};
  EXPECT_EQ(rejection(g_, p), "invalid fusion plan: node %1 is in kernels 1 and 2");
}

// ---- Epilogues ----

TEST(Fuse, ConvBiasReluBecomesAnEpilogue) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[2,3,8,8], %w: f32[4,3,3,3], %b: f32[4]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[2,4,8,8]
      %1 = reshape(%b) {shape=[1,4,1,1]} : f32[1,4,1,1]
      %2 = expand(%1) {shape=[2,4,8,8]} : f32[2,4,8,8]
      %3 = add(%0, %2) : f32[2,4,8,8]
      %4 = relu(%3) : f32[2,4,8,8]
      return %4
    })"),
            "kernel 0 conv2d+loop f32[2,4,8,8]: %0 %1 %2 %3 %4 (in: %x, %w, %b; out: %4)\n");
}

TEST(Fuse, EpiloguesNeedTheOnlyReaderReadingElementByElement) {
  // Two kernels read the matmul's output.
  EXPECT_THAT(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = relu(%0) : f32[4,4]
      %2 = logsumexp(%0) {axes=[1], keepdim=true} : f32[4,1]
      return %1, %2
    })"),
              HasSubstr("library matmul: %0 (in: %x, %w; out: %0)"));
  // The reader ends in a reduction.
  EXPECT_THAT(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = exp(%0) : f32[4,4]
      %2 = sum(%1) {axes=[1], keepdim=false} : f32[4]
      return %2
    })"),
              HasSubstr("library matmul: %0 (in: %x, %w; out: %0)"));
  // The reader reads it through a view (other elements than the one it writes).
  EXPECT_THAT(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4], %y: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = permute(%0) {perm=[1,0]} : f32[4,4]
      %2 = add(%1, %y) : f32[4,4]
      return %2
    })"),
              HasSubstr("library matmul: %0 (in: %x, %w; out: %0)"));
  // The reader has another shape (a broadcast of the output).
  EXPECT_THAT(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,1], %y: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,1]
      %1 = add(%0, %y) : f32[4,4]
      return %1
    })"),
              HasSubstr("library matmul: %0 (in: %x, %w; out: %0)"));
  // One loop reads two matmul outputs: it follows the first, the second is written.
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4], %v: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = matmul(%x, %v) {transpose_a=false, transpose_b=false} : f32[4,4]
      %2 = add(%0, %1) : f32[4,4]
      return %2
    })"),
            "kernel 0 library matmul: %1 (in: %x, %v; out: %1)\n"
            "kernel 1 matmul+loop f32[4,4]: %0 %2 (in: %x, %w, %1; out: %2)\n");
}

TEST(Fuse, AnEpilogueKeepsAReturnedLibraryOutput) {
  EXPECT_EQ(plan_of(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = relu(%0) : f32[4,4]
      return %1, %0
    })"),
            "kernel 0 matmul+loop f32[4,4]: %0 %1 (in: %x, %w; out: %0, %1)\n");
}

TEST(Fuse, EpiloguesAreIdempotent) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = tanh(%0) : f32[4,4]
      return %1
    })");
  EXPECT_EQ(ir::print_fusion_plan(g, fusion_plan(g)),
            "kernel 0 matmul+loop f32[4,4]: %0 %1 (in: %x, %w; out: %1)\n");
  // Attaching again to a plan that has its epilogues changes nothing.
  ir::FusionPlan plan = fusion_plan(g);
  const std::string before = ir::print_fusion_plan(g, plan);
  EXPECT_EQ(attach_epilogues(g, cpu_rules(), plan), 0);
  EXPECT_EQ(ir::print_fusion_plan(g, plan), before);
}

TEST(VerifyFusionPlanEpilogue, RejectsWhatAnEpilogueCannotBe) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4,4], %w: f32[4,4]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,4]
      %1 = exp(%0) : f32[4,4]
      %2 = sum(%1) {axes=[1], keepdim=false} : f32[4]
      %3 = neg(%x) : f32[4,4]
      %4 = permute(%0) {perm=[1,0]} : f32[4,4]
      %5 = add(%4, %x) : f32[4,4]
      return %2, %3, %5
    })");
  auto plan = [&](std::vector<std::pair<KernelKind, std::vector<int>>> groups) {
    ir::FusionPlan p;
    std::vector<int> kernel(g.nodes().size());
    for (size_t k = 0; k < groups.size(); ++k) {
      ir::FusionGroup& grp = p.groups.emplace_back();
      grp.kind = groups[k].first;
      grp.nodes = groups[k].second;
      grp.shape = {4, 4};
      for (int id : grp.nodes) kernel[id] = static_cast<int>(k);
    }
    ir::fill_group_io(g, kernel, p.groups);
    return p;
  };
  using K = KernelKind;
  EXPECT_EQ(rejection(g, plan({{K::Epilogue, {0, 1}}, {K::Loop, {2}}, {K::Loop, {3}},
                               {K::Library, {4}}, {K::Loop, {5}}})),
            "");
  EXPECT_EQ(rejection(g, plan({{K::Epilogue, {0, 1, 2}}, {K::Loop, {3}}, {K::Library, {4}},
                               {K::Loop, {5}}})),
            "invalid fusion plan: epilogue kernel 0 ([4,4]) holds %2 = sum(%1) {axes=[1], "
            "keepdim=false} : f32[4], a reduction");
  EXPECT_EQ(rejection(g, plan({{K::Epilogue, {3, 1}}, {K::Library, {0}}, {K::Loop, {2}},
                               {K::Library, {4}}, {K::Loop, {5}}})),
            "invalid fusion plan: kernel 0 reads %0 from kernel 1, which runs later");
  EXPECT_EQ(rejection(g, plan({{K::Library, {0}}, {K::Epilogue, {3, 1}}, {K::Loop, {2}},
                               {K::Library, {4}}, {K::Loop, {5}}})),
            "invalid fusion plan: epilogue kernel 1 ([4,4]) starts with %3 = neg(%x) : f32[4,4], "
            "which takes no epilogue");
  EXPECT_EQ(rejection(g, plan({{K::Epilogue, {0, 1, 4, 5}}, {K::Loop, {2}}, {K::Loop, {3}}})),
            "invalid fusion plan: epilogue kernel 0 ([4,4]) holds %4 = permute(%0) {perm=[1,0]} : "
            "f32[4,4], which reads the library output other than element by element");
  EXPECT_EQ(rejection(g, plan({{K::Epilogue, {0}}, {K::Loop, {1}}, {K::Loop, {2}},
                               {K::Loop, {3}}, {K::Library, {4}}, {K::Loop, {5}}})),
            "invalid fusion plan: epilogue kernel 0 holds no loop after its library node");
}

TEST_F(VerifyFusionPlan, BadNodeIdsAndEmptyKernels) {
  ir::FusionPlan p = good();
  p.groups[2].nodes = {7};
  EXPECT_EQ(rejection(g_, p), "invalid fusion plan: kernel 2 names node %7, which does not exist");
  p.groups[2].nodes = {};
  EXPECT_EQ(rejection(g_, p), "invalid fusion plan: kernel 2 has no nodes");
}

TEST_F(VerifyFusionPlan, KernelsOutOfOrder) {
  ir::FusionPlan p = good();
  std::swap(p.groups[0], p.groups[1]);
  EXPECT_EQ(rejection(g_, p),
            "invalid fusion plan: kernel 0 reads %0 from kernel 1, which runs later");
}

TEST_F(VerifyFusionPlan, NodesOutOfOrderInsideAKernel) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%0) : f32[4]
      return %1
    })");
  ir::FusionPlan p;
  p.groups = {{KernelKind::Loop, {1, 0}, {Value::param(0)}, {Value::node(1)}, {4}}};
  EXPECT_EQ(rejection(g, p), "invalid fusion plan: kernel 0 lists %1 before its operand %0");
}

TEST_F(VerifyFusionPlan, WrongInputsOrOutputs) {
  ir::FusionPlan p = good();
  p.groups[0].inputs = {Value::param(0)};
  EXPECT_EQ(rejection(g_, p),
            "invalid fusion plan: kernel 0 inputs are (%x) but should be (%x, %y)");
  p = good();
  p.groups[2].inputs = {Value::param(1), Value::node(1)};  // order is first use
  EXPECT_THAT(rejection(g_, p), HasSubstr("kernel 2 inputs are (%y, %1) but should be (%1, %y)"));
  p = good();
  p.groups[1].outputs = {};
  EXPECT_EQ(rejection(g_, p), "invalid fusion plan: kernel 1 outputs are (-) but should be (%1)");
}

TEST_F(VerifyFusionPlan, LoopKernelRules) {
  ir::FusionPlan p = good();
  p.groups[1].kind = KernelKind::Loop;
  p.groups[1].shape = {8};
  EXPECT_EQ(rejection(g_, p),
            "invalid fusion plan: loop kernel 1 ([8]) holds %1 = logsumexp(%0) {axes=[0], "
            "keepdim=false} : f32[8], which is neither elementwise, a view it can fold or alias, "
            "nor a reduction it can end in");
  p = good();
  p.groups[0].shape = {8};
  EXPECT_EQ(
      rejection(g_, p),
      "invalid fusion plan: loop kernel 0 ([8]) holds %0 = add(%x, %y) : f32[4,8], whose shape "
      "is not the iteration shape");
}

TEST_F(VerifyFusionPlan, LoopInputsAreWhatItsNodesRead) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4], %z: f32[3]) {
      %0 = exp(%x) : f32[4]
      return %0, %z
    })");
  ir::FusionPlan p;
  p.groups = {{KernelKind::Loop, {0}, {Value::param(0), Value::param(1)}, {Value::node(0)}, {4}}};
  EXPECT_EQ(rejection(g, p),
            "invalid fusion plan: kernel 0 inputs are (%x, %z) but should be (%x)");
}

TEST_F(VerifyFusionPlan, LibraryKernelRunsOneNode) {
  ir::FusionPlan p = good();
  p.groups[1].nodes = {1, 2};
  p.groups.pop_back();
  EXPECT_EQ(
      rejection(g_, p),
      "invalid fusion plan: library kernel 1 holds 2 nodes; a library kernel runs exactly one");
}

// The loop kernel contract for views and reductions: what a plan may claim, by hand.
class VerifyLoopContents : public ::testing::Test {
 protected:
  const ir::Graph g_ = ir::parse(R"(graph @f(%x: f32[4,8], %y: f32[8,4]) {
      %0 = exp(%x) : f32[4,8]
      %1 = permute(%y) {perm=[1,0]} : f32[4,8]
      %2 = add(%0, %1) : f32[4,8]
      %3 = sum(%2) {axes=[1], keepdim=false} : f32[4]
      %4 = reshape(%3) {shape=[2,2]} : f32[2,2]
      %5 = permute(%0) {perm=[1,0]} : f32[8,4]
      %6 = max(%2) {axes=[0], keepdim=false} : f32[8]
      %7 = reshape(%y) {shape=[32]} : f32[32]
      return %4, %5, %6, %7
    })");
  // A plan of the given groups (in order), inputs and outputs filled in.
  ir::FusionPlan plan(std::vector<std::pair<std::vector<int>, Shape>> groups) const {
    ir::FusionPlan p;
    std::vector<int> kernel(g_.nodes().size());
    for (size_t k = 0; k < groups.size(); ++k) {
      ir::FusionGroup& grp = p.groups.emplace_back();
      grp.nodes = groups[k].first;
      grp.kind = groups[k].second.empty() ? KernelKind::Library : KernelKind::Loop;
      grp.shape = groups[k].second;
      for (int id : grp.nodes) kernel[id] = static_cast<int>(k);
    }
    ir::fill_group_io(g_, kernel, p.groups);
    return p;
  }
};

TEST_F(VerifyLoopContents, AcceptsFoldedViewsAliasesAndAReduction) {
  EXPECT_EQ(rejection(g_, plan({{{0, 1, 2, 3, 4}, {4, 8}},
                               {{5}, {}},
                               {{6}, {4, 8}},
                               {{7}, {}}})),
            "");
  EXPECT_EQ(ir::print_fusion_plan(g_, fusion_plan(g_)),
            "kernel 0 loop f32[4,8] reduce[1]: %0 %1 %2 %3 %4 (in: %x, %y; out: %0, %2, %4)\n"
            "kernel 1 library permute: %5 (in: %0; out: %5)\n"
            "kernel 2 loop f32[4,8] reduce[0]: %6 (in: %2; out: %6)\n"
            "kernel 3 library reshape: %7 (in: %y; out: %7)\n");
  EXPECT_EQ(rejection(g_, fusion_plan(g_)), "");
}

TEST_F(VerifyLoopContents, RejectsAViewOfAComputedValue) {
  EXPECT_EQ(rejection(g_, plan({{{0, 1, 2, 3, 4, 5}, {4, 8}}, {{6}, {4, 8}}, {{7}, {}}})),
            "invalid fusion plan: loop kernel 0 ([4,8]) holds %5 = permute(%0) {perm=[1,0]} : "
            "f32[8,4], which is neither elementwise, a view it can fold or alias, nor a "
            "reduction it can end in");
}

TEST_F(VerifyLoopContents, RejectsReductionsOverOtherAxes) {
  EXPECT_THAT(rejection(g_, plan({{{0, 1, 2, 3, 4, 6}, {4, 8}}, {{5}, {}}, {{7}, {}}})),
              HasSubstr("holds %6 = max(%2) {axes=[0], keepdim=false} : f32[8], which reduces "
                        "other axes than the kernel's other reductions"));
}

TEST_F(VerifyLoopContents, RejectsReadingAReductionPerElement) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4,8]) {
      %0 = sum(%x) {axes=[1], keepdim=true} : f32[4,1]
      %1 = sub(%x, %0) : f32[4,8]
      return %1
    })");
  ir::FusionPlan p;
  p.groups = {{KernelKind::Loop, {0, 1}, {Value::param(0)}, {Value::node(1)}, {4, 8}}};
  EXPECT_EQ(rejection(g, p),
            "invalid fusion plan: loop kernel 0 ([4,8]) holds %1, which reads %0, a reduction "
            "result or alias the kernel does not have per element");
}

TEST_F(VerifyLoopContents, RejectsAReductionOfAnotherShape) {
  EXPECT_EQ(rejection(g_, plan({{{0, 1, 2}, {4, 8}}, {{3}, {8}}, {{4}, {}}, {{5}, {}},
                               {{6}, {4, 8}}, {{7}, {}}})),
            "invalid fusion plan: loop kernel 1 ([8]) holds %3 = sum(%2) {axes=[1], "
            "keepdim=false} : f32[4], which does not reduce the iteration shape");
}

TEST_F(VerifyLoopContents, RejectsWritingAFoldedViewOfAnotherShape) {
  // %7 = reshape(%y) folds, but the kernel would have to write it: [32] is not [4,8].
  EXPECT_EQ(rejection(g_, plan({{{0, 1, 2, 3, 4}, {4, 8}}, {{5}, {}}, {{6, 7}, {4, 8}}})),
            "invalid fusion plan: loop kernel 2 ([4,8]) writes %7, a view it folds into index "
            "maps, whose shape is not the iteration shape");
}

TEST_F(VerifyLoopContents, RejectsViewsThatDoNotFold) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4,8], %y: f32[32]) {
      %0 = permute(%x) {perm=[1,0]} : f32[8,4]
      %1 = reshape(%0) {shape=[32]} : f32[32]
      %2 = add(%1, %y) : f32[32]
      return %2
    })");
  ir::FusionPlan p;
  p.groups = {{KernelKind::Loop, {0, 1, 2}, {Value::param(0), Value::param(1)}, {Value::node(2)},
               {32}}};
  EXPECT_EQ(rejection(g, p),
            "invalid fusion plan: loop kernel 0 ([32]) holds %2, which reads %1 of shape [32] "
            "through views that do not fold into the iteration space");
}

TEST(PrintFusionPlan, Format) {
  const ir::Graph g = ir::parse(R"(graph @f(%p0: f32[128,512], %p2: f32[512,512]) {
      %0 = full() {shape=[], dtype=f32, value=0} : f32[]
      %1 = maximum(%p0, %0) : f32[128,512]
      %2 = exp(%1) : f32[128,512]
      %3 = neg(%2) : f32[128,512]
      %4 = sqrt(%3) : f32[128,512]
      %5 = matmul(%4, %p2) {transpose_a=false, transpose_b=false} : f32[128,512]
      return %5
    })");
  ir::FusionPlan p;
  p.groups = {
      {KernelKind::Library, {0}, {}, {Value::node(0)}, {}},
      {KernelKind::Loop, {1}, {Value::param(0), Value::node(0)}, {Value::node(1)}, {128, 512}},
      {KernelKind::Loop, {2, 3, 4}, {Value::node(1)}, {Value::node(4)}, {128, 512}},
      {KernelKind::Library, {5}, {Value::node(4), Value::param(1)}, {Value::node(5)}, {}}};
  EXPECT_EQ(rejection(g, p), "");
  EXPECT_EQ(ir::print_fusion_plan(g, p),
            "kernel 0 library full: %0 (in: -; out: %0)\n"
            "kernel 1 loop f32[128,512]: %1 (in: %p0, %0; out: %1)\n"
            "kernel 2 loop f32[128,512]: %2 %3 %4 (in: %1; out: %4)\n"
            "kernel 3 library matmul: %5 (in: %4, %p2; out: %5)\n");
}

// Random graphs over three shapes mixing loop and library ops: every plan must pass the verifier
// (in particular, be acyclic and correctly ordered), with and without small kernels.
ir::Graph random_graph(unsigned seed, int num_nodes) {
  std::mt19937 rng(seed);
  ir::Graph g;
  std::vector<Value> sq{g.add_param({DType::F32, {4, 4}}), g.add_param({DType::F32, {4, 4}})};
  std::vector<Value> col{g.add_param({DType::F32, {4, 1}})};
  std::vector<Value> row{g.add_param({DType::F32, {4}})};
  auto pick = [&](const std::vector<Value>& vs) {
    // Favour recent values so that chains form, but reach back too.
    const int n = static_cast<int>(vs.size());
    const int back = std::min(n - 1, static_cast<int>(rng() % 8 == 0 ? rng() % n : rng() % 3));
    return vs[n - 1 - back];
  };
  const ir::MatMulAttrs mm{};
  for (int i = 0; i < num_nodes; ++i) {
    switch (rng() % 10) {
      case 0:
        sq.push_back(g.add(ir::Op::MatMul, {pick(sq), pick(sq)}, mm));
        break;
      case 1:
        col.push_back(g.add(ir::Op::Sum, {pick(sq)}, ir::ReduceAttrs{{1}, true}));
        break;
      case 2:
        row.push_back(g.add(ir::Op::ReduceMax, {pick(sq)}, ir::ReduceAttrs{{0}, false}));
        break;
      case 3:
        sq.push_back(g.add(ir::Op::Sub, {pick(sq), pick(col)}, ir::NoAttrs{}));
        break;
      case 4:
        sq.push_back(g.add(ir::Op::Mul, {pick(row), pick(sq)}, ir::NoAttrs{}));
        break;
      case 5:
        col.push_back(g.add(ir::Op::Exp, {pick(col)}, ir::NoAttrs{}));
        break;
      case 6:
        sq.push_back(g.add(ir::Op::Expand, {pick(row)}, ir::ExpandAttrs{{4, 4}}));
        break;
      case 7:
        sq.push_back(g.add(ir::Op::Permute, {pick(sq)}, ir::PermuteAttrs{{1, 0}}));
        break;
      default:
        sq.push_back(g.add(ir::Op::Add, {pick(sq), pick(sq)}, ir::NoAttrs{}));
        break;
    }
  }
  g.set_results({sq.back(), col.back(), row.back()});
  return g;
}

// Whether kernels p and c (p < c) merged into one loop kernel at c's place would be a valid plan.
bool valid_merged(const ir::Graph& g, const ir::FusionPlan& plan, int p, int c) {
  ir::FusionPlan m = plan;
  ir::FusionGroup& into = m.groups[c];
  into.nodes.insert(into.nodes.end(), plan.groups[p].nodes.begin(), plan.groups[p].nodes.end());
  std::sort(into.nodes.begin(), into.nodes.end());
  m.groups.erase(m.groups.begin() + p);
  std::vector<int> kernel(g.nodes().size());
  for (int i = 0; i < static_cast<int>(m.groups.size()); ++i)
    for (int id : m.groups[i].nodes) kernel[id] = i;
  ir::fill_group_io(g, kernel, m.groups);
  return rejection(g, m).empty();
}

// Greedy but not lazy: two loop kernels of one shape with a direct edge stay apart only when
// another path joins them (merging would close a cycle), or when the merged kernel would break
// the loop kernel contract (a reduction result read per element, reductions over other axes,
// views that stop folding). One known greedy miss is allowed: a view chain splits where a view is
// read twice (the later view reads it from outside), so an edge into a view is not checked.
// Checked by brute force on the kernel DAG.
void expect_no_missed_vertical_fusion(const ir::Graph& g, const ir::FusionPlan& plan) {
  const int k = static_cast<int>(plan.groups.size());
  std::vector<int> kernel(g.nodes().size());
  for (int i = 0; i < k; ++i)
    for (int id : plan.groups[i].nodes) kernel[id] = i;
  std::vector<std::set<int>> succ(k);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) succ[kernel[v.def]].insert(kernel[id]);
  auto reaches = [&](int from, int to) {
    std::vector<int> stack{from};
    std::vector<char> seen(k, 0);
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (x == to) return true;
      if (std::exchange(seen[x], 1)) continue;
      stack.insert(stack.end(), succ[x].begin(), succ[x].end());
    }
    return false;
  };
  for (int p = 0; p < k; ++p) {
    const ir::FusionGroup& a = plan.groups[p];
    for (int c : succ[p]) {
      const ir::FusionGroup& b = plan.groups[c];
      if (a.kind != KernelKind::Loop || b.kind != KernelKind::Loop || a.shape != b.shape) continue;
      bool into_view = false;
      for (int id : b.nodes)
        for (Value v : g.node(id).inputs)
          into_view |= ir::is_foldable_view(g.node(id).op) && !v.is_param() && kernel[v.def] == p;
      if (into_view) continue;
      bool other_path = false;
      for (int x : succ[p]) other_path = other_path || (x != c && reaches(x, c));
      EXPECT_TRUE(other_path || !valid_merged(g, plan, p, c))
          << "kernels " << p << " and " << c << " could have fused\n"
          << ir::print(g) << ir::print_fusion_plan(g, plan);
    }
  }
}

TEST(Fuse, RandomGraphsGivePlansThatVerify) {
  for (unsigned seed = 1; seed <= 200; ++seed) {
    const ir::Graph g = random_graph(seed, 60);
    for (int max_nodes : {2, 5, 64}) {
      const ir::FusionPlan plan = fusion_plan(g, {.max_nodes_per_kernel = max_nodes});
      ASSERT_EQ(rejection(g, plan), "") << "seed " << seed << ", max " << max_nodes << "\n"
                                        << ir::print(g) << ir::print_fusion_plan(g, plan);
      int loops = 0;
      for (const ir::FusionGroup& grp : plan.groups) {
        loops += grp.kind == KernelKind::Loop;
        const int loop_nodes = static_cast<int>(grp.nodes.size()) -
                               (grp.kind == KernelKind::Epilogue ? 1 : 0);  // the library node
        EXPECT_LE(loop_nodes, max_nodes);
      }
      if (max_nodes == 64) {
        EXPECT_LT(plan.groups.size(), g.nodes().size()) << "seed " << seed;
        expect_no_missed_vertical_fusion(g, plan);
      }
    }
  }
}

// An MLP with gelu written in primitives, forward and backward (the gelu derivative reads the
// forward's pre-activation): 27k nodes. The derivative fuses into the forward kernel; the product
// with the incoming gradient cannot (the gradient comes from later kernels).
TEST(Fuse, LargeGeluMlp) {
  ir::Graph g;
  const Value x = g.add_param({DType::F32, {8, 8}});
  const Value w = g.add_param({DType::F32, {8, 8}});
  const Value b = g.add_param({DType::F32, {8}});
  auto op = [&](ir::Op o, std::vector<Value> in) { return g.add(o, std::move(in), ir::NoAttrs{}); };
  const int layers = 3000;
  std::vector<Value> zs, as{x};
  for (int i = 0; i < layers; ++i) {
    zs.push_back(op(ir::Op::Add, {g.add(ir::Op::MatMul, {as.back(), w}, ir::MatMulAttrs{}), b}));
    as.push_back(op(ir::Op::Gelu, {zs.back()}));
  }
  Value grad = as.back();
  for (int i = layers - 1; i >= 0; --i) {
    const Value t = op(ir::Op::Tanh, {zs[i]});
    const Value d = op(ir::Op::Sub, {zs[i], op(ir::Op::Mul, {t, t})});
    const Value gz = op(ir::Op::Mul, {grad, d});
    g.add(ir::Op::MatMul, {as[i], gz}, ir::MatMulAttrs{true, false});
    grad = g.add(ir::Op::MatMul, {gz, w}, ir::MatMulAttrs{false, true});
  }
  g.set_results({grad});
  const ir::FusionPlan plan = fusion_plan(g);
  EXPECT_EQ(rejection(g, plan), "");
  // Per layer: forward matmul with {add gelu tanh mul sub} as its epilogue, the weight-gradient
  // matmul, and the input-gradient matmul with the previous layer's {mul} as its epilogue; the
  // last layer's gradient product joins its forward kernel.
  EXPECT_EQ(plan.groups.size(), 3u * layers);
  EXPECT_EQ(plan.groups[0].kind, KernelKind::Epilogue);
  EXPECT_EQ(plan.groups[0].nodes.size(), 6u);
  // Without epilogues: forward matmul, {add gelu tanh mul sub}, {mul}, two backward matmuls.
  const ir::FusionPlan loops_only = fusion_plan(g, {.epilogues = false});
  EXPECT_EQ(rejection(g, loops_only), "");
  EXPECT_EQ(loops_only.groups.size(), 5u * layers - 1);
  EXPECT_EQ(loops_only.groups[1].nodes.size(), 5u);
}

// A residual stack, 30k nodes: h = h + matmul(relu(h), w). Each relu joins the add before it;
// each add must start a new kernel (joining would close a cycle through the matmul).
TEST(Fuse, LargeResidualStack) {
  ir::Graph g;
  Value h = g.add_param({DType::F32, {8, 8}});
  const Value w = g.add_param({DType::F32, {8, 8}});
  const int layers = 10000;
  for (int i = 0; i < layers; ++i) {
    const Value a = g.add(ir::Op::Relu, {h}, ir::NoAttrs{});
    const Value m = g.add(ir::Op::MatMul, {a, w}, ir::MatMulAttrs{});
    h = g.add(ir::Op::Add, {h, m}, ir::NoAttrs{});
  }
  g.set_results({h});
  const auto start = std::chrono::steady_clock::now();
  const ir::FusionPlan plan = fusion_plan(g);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(rejection(g, plan), "");
  EXPECT_EQ(plan.groups.size(), layers + 1u);  // relu0, then matmul with add+relu per layer
  EXPECT_EQ(fusion_plan(g, {.epilogues = false}).groups.size(), 2u * layers + 1);
  RecordProperty("fuse_ms", std::to_string(ms));
}

}  // namespace
}  // namespace lt::passes
