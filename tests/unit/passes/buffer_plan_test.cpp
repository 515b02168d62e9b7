#include "passes/buffer_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "cpu_plans.h"
#include "ir/buffer_plan.h"
#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "passes/fuse.h"

namespace lt::passes {
namespace {

using ir::BufferPlan;
using ir::Storage;
using ir::Value;
using testing::cpu_rules;
using testing::fusion_plan;
using ::testing::HasSubstr;

ir::Graph parse_ok(std::string_view text) {
  ir::Graph g = ir::parse(text);
  ir::verify(g);
  return g;
}

// Plans and checks the plan against its contract, twice (the planner is deterministic).
BufferPlan plan_ok(const ir::Graph& g, const ir::FusionPlan& fusion, BufferPlanOptions o = {}) {
  ir::verify_fusion_plan(g, fusion, cpu_rules());
  const BufferPlan plan = plan_buffers(g, fusion, cpu_rules(), o);
  EXPECT_NO_THROW(ir::verify_buffer_plan(g, fusion, plan, cpu_rules()))
      << ir::print_buffer_plan(g, plan);
  EXPECT_EQ(ir::print_buffer_plan(g, plan_buffers(g, fusion, cpu_rules(), o)),
            ir::print_buffer_plan(g, plan));
  return plan;
}

const ir::BufferSlot& slot(const BufferPlan& plan, Value v) {
  const int s = plan.slot_of(v);
  EXPECT_GE(s, 0);
  return plan.slots.at(s);
}

// The first slot of a chain of reshape aliases (ir::BufferSlot::alias).
int alias_root(const BufferPlan& plan, int s) {
  while (plan.slots[s].alias >= 0) s = plan.slots[s].alias;
  return s;
}

// The independent check: at every launch, no output shares a byte with an input or with any other
// arena value still live, but for a reshape's output and the value it aliases; no result is in
// the arena.
void expect_no_aliasing(const ir::Graph& g, const ir::FusionPlan& fusion, const BufferPlan& plan) {
  const auto launches = ir::launch_sequence(g, fusion, cpu_rules());
  for (int li = 0; li < static_cast<int>(launches.size()); ++li)
    for (Value w : launches[li].writes) {
      const ir::BufferSlot& out = slot(plan, w);
      if (out.storage != Storage::Arena || out.bytes() == 0) continue;
      const int root = alias_root(plan, plan.slot_of(w));
      for (const ir::BufferSlot& other : plan.slots) {
        if (&other == &out || other.storage != Storage::Arena || other.bytes() == 0) continue;
        if (alias_root(plan, static_cast<int>(&other - plan.slots.data())) == root) continue;
        if (other.first > li || other.live_until() < li) continue;  // not live at this launch
        EXPECT_FALSE(out.offset < other.offset + other.bytes() &&
                     other.offset < out.offset + out.bytes())
            << ir::value_name(g, w) << " overlaps " << ir::value_name(g, other.value)
            << " at launch " << li << "\n"
            << ir::print_buffer_plan(g, plan);
      }
    }
  for (int s : plan.results) EXPECT_NE(plan.slots[s].storage, Storage::Arena);
  // A collective writes the bytes it aliases: nothing else on them is read after its launch.
  for (size_t c = 0; c < plan.slots.size(); ++c) {
    const ir::BufferSlot& out = plan.slots[c];
    if (out.alias < 0 || !ir::as_collective(g.node(out.value.def).op)) continue;
    for (size_t t = 0; t < plan.slots.size(); ++t) {
      int chain = static_cast<int>(t);
      while (chain >= 0 && chain != static_cast<int>(c)) chain = plan.slots[chain].alias;
      if (chain >= 0 || alias_root(plan, static_cast<int>(t)) != alias_root(plan, out.alias))
        continue;
      EXPECT_LE(plan.slots[t].last, out.first)
          << ir::value_name(g, plan.slots[t].value) << " is read after the collective "
          << ir::value_name(g, out.value) << " writes its bytes";
    }
  }
}

constexpr const char* kChain = R"(graph @f(%x: f32[16,16]) {
  %0 = exp(%x) : f32[16,16]
  %1 = neg(%0) : f32[16,16]
  %2 = exp(%1) : f32[16,16]
  %3 = neg(%2) : f32[16,16]
  %4 = exp(%3) : f32[16,16]
  return %4
})";

TEST(BufferPlan, ChainReusesTwoArenaBuffers) {
  const ir::Graph g = parse_ok(kChain);
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  // Four intermediates of 1 KiB, at most two live at once: they ping-pong.
  EXPECT_EQ(plan.arena_bytes, 2048);
  EXPECT_EQ(plan.live_peak_bytes, 2048);
  EXPECT_EQ(plan.naive_bytes, 5 * 1024);
  EXPECT_EQ(plan.result_bytes, 1024);
  EXPECT_EQ(slot(plan, Value::node(0)).offset, slot(plan, Value::node(2)).offset);
  EXPECT_EQ(slot(plan, Value::node(1)).offset, slot(plan, Value::node(3)).offset);
  EXPECT_NE(slot(plan, Value::node(0)).offset, slot(plan, Value::node(1)).offset);
  EXPECT_EQ(slot(plan, Value::node(4)).storage, Storage::Result);
  expect_no_aliasing(g, fusion, plan);
}

TEST(BufferPlan, PrintsOneLinePerWrittenValue) {
  const ir::Graph g = parse_ok(kChain);
  EXPECT_EQ(ir::print_buffer_plan(g, plan_ok(g, ir::unfused_plan(g))),
            "buffers: 5 launches, arena 2048 bytes (live peak 2048), results 1024, donated 0, "
            "naive 5120\n"
            "%0 f32[16,16] arena @0 +1024 launches 0..1\n"
            "%1 f32[16,16] arena @1024 +1024 launches 1..2\n"
            "%2 f32[16,16] arena @0 +1024 launches 2..3\n"
            "%3 f32[16,16] arena @1024 +1024 launches 3..4\n"
            "%4 f32[16,16] result launch 4\n");
}

TEST(BufferPlan, FusedChainNeedsNoArena) {
  const ir::Graph g = parse_ok(kChain);
  const BufferPlan plan = plan_ok(g, fusion_plan(g));
  EXPECT_EQ(plan.num_launches, 1);
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_EQ(plan.slot_of(Value::node(1)), -1);  // inside the loop kernel
  EXPECT_EQ(plan.naive_bytes, 1024);
}

TEST(BufferPlan, ALaunchNeverWritesOverItsInputs) {
  // %2 reads %0 and %1 at its launch: it may not take either's space, though both die there.
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[8,8]) {
    %0 = exp(%x) : f32[8,8]
    %1 = matmul(%0, %0) {transpose_a=false, transpose_b=false} : f32[8,8]
    %2 = matmul(%0, %1) {transpose_a=false, transpose_b=false} : f32[8,8]
    %3 = neg(%2) : f32[8,8]
    return %3
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  std::set<int64_t> at_launch2{slot(plan, Value::node(0)).offset, slot(plan, Value::node(1)).offset,
                               slot(plan, Value::node(2)).offset};
  EXPECT_EQ(at_launch2.size(), 3u);
  // After launch 2, %3 may reuse %0's or %1's space, but not %2's.
  EXPECT_NE(slot(plan, Value::node(3)).storage, Storage::Arena);  // a result
  expect_no_aliasing(g, fusion, plan);
}

TEST(BufferPlan, VerifierRejectsSharedBytesOfLiveValues) {
  const ir::Graph g = parse_ok(kChain);
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  BufferPlan plan = plan_ok(g, fusion);
  plan.slots[plan.slot_of(Value::node(1))].offset = slot(plan, Value::node(0)).offset;
  try {
    ir::verify_buffer_plan(g, fusion, plan, cpu_rules());
    FAIL() << "accepted";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("shares arena bytes"));
  }
  BufferPlan in_arena = plan_ok(g, fusion);
  in_arena.slots[in_arena.slot_of(Value::node(4))].storage = Storage::Arena;
  EXPECT_THROW(ir::verify_buffer_plan(g, fusion, in_arena, cpu_rules()), InternalError);
}

// A library reshape of an intermediate takes its bytes, and the intermediate's bytes stay taken
// while the reshape's output is read (%2 may not reuse them: %1 is read at launch 3).
TEST(BufferPlan, ReshapeOfAnIntermediateAliasesIt) {
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[4,8]) {
    %0 = exp(%x) : f32[4,8]
    %1 = reshape(%0) {shape=[32]} : f32[32]
    %2 = neg(%1) : f32[32]
    %3 = add(%2, %1) : f32[32]
    return %3
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(ir::print_buffer_plan(g, plan),
            "buffers: 4 launches, arena 256 bytes (live peak 256), results 128, donated 0, "
            "naive 512\n"
            "%0 f32[4,8] arena @0 +128 launches 0..1\n"
            "%1 f32[32] arena @0 +128 alias %0 (no launch) launches 1..3\n"
            "%2 f32[32] arena @128 +128 launches 2..3\n"
            "%3 f32[32] result launch 3\n");
  expect_no_aliasing(g, fusion, plan);
  EXPECT_EQ(plan.elided, std::vector<int>{1});  // the reshape moves nothing: no launch
  BufferPlanOptions copies;
  copies.alias_reshapes = false;
  const BufferPlan copied = plan_ok(g, fusion, copies);
  EXPECT_EQ(copied.slots[plan.slot_of(Value::node(1))].alias, -1);
  EXPECT_TRUE(copied.elided.empty());
}

// The reshapes the plan elides are exactly those whose output aliases their operand: a launch
// dropped without the alias would leave its output unwritten, one kept with it would copy a
// value onto itself.
TEST(BufferPlan, VerifierRejectsElidedNodesThatAreNotAliasedReshapes) {
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[4,8]) {
    %0 = exp(%x) : f32[4,8]
    %1 = reshape(%0) {shape=[32]} : f32[32]
    %2 = neg(%1) : f32[32]
    return %2
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  for (const std::vector<int>& wrong : {std::vector<int>{}, {0, 1}, {2}}) {
    BufferPlan plan = plan_ok(g, fusion);
    plan.elided = wrong;
    try {
      ir::verify_buffer_plan(g, fusion, plan, cpu_rules());
      FAIL() << "accepted";
    } catch (const InternalError& e) {
      EXPECT_THAT(e.what(), HasSubstr("aliased reshapes [1]"));
    }
  }
}

// A reshape that is a result needs a buffer of its own, and one of a parameter copies it (a
// donated parameter's buffer may be written): no alias either way.
TEST(BufferPlan, NoAliasForAResultOrOfAParameter) {
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[4,8]) {
    %0 = exp(%x) : f32[4,8]
    %1 = reshape(%0) {shape=[32]} : f32[32]
    %2 = reshape(%x) {shape=[32]} : f32[32]
    %3 = add(%2, %2) : f32[32]
    return %1, %3
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(1)).storage, Storage::Result);
  EXPECT_EQ(slot(plan, Value::node(1)).alias, -1);
  EXPECT_EQ(slot(plan, Value::node(2)).storage, Storage::Arena);
  EXPECT_EQ(slot(plan, Value::node(2)).alias, -1);
}

TEST(BufferPlan, VerifierRejectsAnAliasThatIsNoReshape) {
  const ir::Graph g = parse_ok(kChain);
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  BufferPlan plan = plan_ok(g, fusion);
  ir::BufferSlot& b = plan.slots[plan.slot_of(Value::node(2))];
  b.alias = plan.slot_of(Value::node(1));
  b.offset = slot(plan, Value::node(1)).offset;
  try {
    ir::verify_buffer_plan(g, fusion, plan, cpu_rules());
    FAIL() << "accepted";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("an alias that is not a library reshape"));
  }
}

// A gradient bucket: the pack is read by its all-reduce alone, which then reduces in the pack's
// bytes instead of a copy of them; the bucket's slices read those bytes.
TEST(BufferPlan, AllReduceOfADeadIntermediateReducesInItsBytes) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[8], %b: f32[8]) {
    %0 = concat(%a, %b) {axis=0} : f32[16]
    %1 = all_reduce(%0) {reduce=mean} : f32[16]
    %2 = slice(%1) {start=[0], stop=[8], step=[1]} : f32[8]
    %3 = slice(%1) {start=[8], stop=[16], step=[1]} : f32[8]
    %4 = add(%2, %3) : f32[8]
    return %4
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(ir::print_buffer_plan(g, plan),
            "buffers: 5 launches, arena 192 bytes (live peak 192), results 32, donated 0, "
            "naive 224\n"
            "%0 f32[16] arena @0 +64 launches 0..1\n"
            "%1 f32[16] arena @0 +64 alias %0 launches 1..3\n"
            "%2 f32[8] arena @64 +64 launches 2..4\n"
            "%3 f32[8] arena @128 +64 launches 3..4\n"
            "%4 f32[8] result launch 4\n");
  expect_no_aliasing(g, fusion, plan);
  BufferPlanOptions copies;
  copies.alias_collectives = false;
  EXPECT_EQ(plan_ok(g, fusion, copies).slots[plan.slot_of(Value::node(1))].alias, -1);
}

// An operand read after the all-reduce, directly or through a reshape of it, keeps its bytes: the
// all-reduce gets a buffer of its own and copies it there.
TEST(BufferPlan, AllReduceOfALiveIntermediateCopiesIt) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[4,4]) {
    %0 = exp(%a) : f32[4,4]
    %1 = reshape(%0) {shape=[16]} : f32[16]
    %2 = all_reduce(%0) {reduce=sum} : f32[4,4]
    %3 = neg(%1) : f32[16]
    %4 = all_reduce(%3) {reduce=sum} : f32[16]
    %5 = add(%4, %3) : f32[16]
    %6 = reshape(%2) {shape=[16]} : f32[16]
    %7 = add(%5, %6) : f32[16]
    return %7
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(1)).alias, plan.slot_of(Value::node(0)));
  EXPECT_EQ(slot(plan, Value::node(2)).alias, -1);  // %1, %0's bytes, is read later
  EXPECT_EQ(slot(plan, Value::node(4)).alias, -1);  // %3 is read later
  EXPECT_EQ(slot(plan, Value::node(6)).alias, plan.slot_of(Value::node(2)));
  expect_no_aliasing(g, fusion, plan);
}

// A gradient the caller keeps: the all-reduce's output is a result, so its operand, read by
// nothing after it, is written into the result's buffer and the all-reduce copies nothing.
TEST(BufferPlan, AllReduceIntoAResultHasItsOperandWrittenThere) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[16], %w: f32[16]) {
    %0 = exp(%a) : f32[16]
    %1 = all_reduce(%0) {reduce=mean} : f32[16]
    %2 = sub(%w, %1) : f32[16]
    return %2, %1
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(ir::print_buffer_plan(g, plan),
            "buffers: 3 launches, arena 0 bytes (live peak 0), results 128, donated 0, "
            "naive 192\n"
            "%0 f32[16] in result %1 launches 0..1\n"
            "%1 f32[16] result launches 1..2\n"
            "%2 f32[16] result launch 2\n");
  expect_no_aliasing(g, fusion, plan);
  BufferPlanOptions copies;
  copies.alias_collectives = false;
  EXPECT_EQ(plan_ok(g, fusion, copies).slots[plan.slot_of(Value::node(0))].storage,
            Storage::Arena);
}

// Not where the operand is read after the all-reduce, nor where a reshape aliases its bytes.
TEST(BufferPlan, AllReduceIntoAResultOfALiveOrReshapedOperandCopiesIt) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[4,4]) {
    %0 = exp(%a) : f32[4,4]
    %1 = all_reduce(%0) {reduce=sum} : f32[4,4]
    %2 = add(%1, %0) : f32[4,4]
    %3 = neg(%a) : f32[4,4]
    %4 = reshape(%3) {shape=[16]} : f32[16]
    %5 = all_reduce(%3) {reduce=sum} : f32[4,4]
    %6 = exp(%4) : f32[16]
    return %2, %1, %5, %6
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(0)).storage, Storage::Arena);
  EXPECT_EQ(slot(plan, Value::node(3)).storage, Storage::Arena);
  EXPECT_EQ(slot(plan, Value::node(4)).alias, plan.slot_of(Value::node(3)));
  expect_no_aliasing(g, fusion, plan);
}

TEST(BufferPlan, VerifierRejectsAnOperandInAResultItIsReadAfter) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[16]) {
    %0 = exp(%a) : f32[16]
    %1 = all_reduce(%0) {reduce=sum} : f32[16]
    %2 = add(%1, %0) : f32[16]
    return %2, %1
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  BufferPlan plan = plan_ok(g, fusion);
  ir::BufferSlot& b = plan.slots[plan.slot_of(Value::node(0))];
  ASSERT_EQ(b.storage, Storage::Arena);
  b.storage = Storage::InResult;
  b.in_result = plan.slot_of(Value::node(1));
  try {
    ir::verify_buffer_plan(g, fusion, plan, cpu_rules());
    FAIL() << "accepted";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "invalid buffer plan: %0: in the buffer of %1, but launch 2 reads it later");
  }
}

TEST(BufferPlan, VerifierRejectsACollectiveOverAValueReadLater) {
  const ir::Graph g = parse_ok(R"(graph @f(%a: f32[16]) {
    %0 = exp(%a) : f32[16]
    %1 = all_reduce(%0) {reduce=sum} : f32[16]
    %2 = add(%1, %0) : f32[16]
    return %2
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  BufferPlan plan = plan_ok(g, fusion);
  ir::BufferSlot& b = plan.slots[plan.slot_of(Value::node(1))];
  ASSERT_EQ(b.alias, -1);
  b.alias = plan.slot_of(Value::node(0));
  b.offset = slot(plan, Value::node(0)).offset;
  try {
    ir::verify_buffer_plan(g, fusion, plan, cpu_rules());
    FAIL() << "accepted";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(),
                 "invalid buffer plan: %1: a collective writes over %0, which launch 2 reads later");
  }
}

TEST(BufferPlan, ResultsAreNeverInTheArenaEvenWhenReadLater) {
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[4,4]) {
    %0 = exp(%x) : f32[4,4]
    %1 = sum(%0) {axes=[0], keepdim=false} : f32[4]
    %2 = neg(%1) : f32[4]
    return %2, %0, %x, %0
  })");
  const ir::FusionPlan fusion = ir::unfused_plan(g);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(0)).storage, Storage::Result);
  EXPECT_EQ(plan.results[1], plan.results[3]);  // a value returned twice has one buffer
  EXPECT_EQ(plan.results[2], 0);                // a returned parameter is the parameter
  EXPECT_EQ(slot(plan, Value::node(1)).storage, Storage::Arena);
  EXPECT_EQ(plan.result_bytes, 64 + 16);
  expect_no_aliasing(g, fusion, plan);
}

TEST(BufferPlan, DonationTakenWhenTheDonorIsDead) {
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,4], %x: f32[4,4]) donate(%w: 0) {
    %0 = neg(%w) : f32[4,4]
    %1 = matmul(%0, %x) {transpose_a=false, transpose_b=false} : f32[4,4]
    return %1
  })");
  const BufferPlan plan = plan_ok(g, ir::unfused_plan(g));
  const ir::BufferSlot& r = slot(plan, Value::node(1));
  EXPECT_EQ(r.storage, Storage::Donated);
  EXPECT_EQ(r.donor, 0);
  EXPECT_FALSE(r.in_place);
  EXPECT_EQ(plan.donated_bytes, 64);
  EXPECT_EQ(plan.result_bytes, 0);
  EXPECT_EQ(plan_buffers(g, ir::unfused_plan(g), cpu_rules(), {.donate = false}).donated_bytes, 0);
}

TEST(BufferPlan, DonationRefusedWhenTheDonorIsReadLater) {
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,4], %x: f32[4,4]) donate(%w: 0) {
    %0 = neg(%x) : f32[4,4]
    %1 = mul(%w, %x) : f32[4,4]
    return %0, %1
  })");
  const BufferPlan plan = plan_ok(g, ir::unfused_plan(g));
  EXPECT_EQ(slot(plan, Value::node(0)).storage, Storage::Result);
  EXPECT_EQ(plan.donated_bytes, 0);
}

TEST(BufferPlan, DonationRefusedWhenALibraryKernelReadsTheDonor) {
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,4], %x: f32[4,4]) donate(%w: 0) {
    %0 = matmul(%w, %x) {transpose_a=false, transpose_b=false} : f32[4,4]
    return %0
  })");
  EXPECT_EQ(slot(plan_ok(g, fusion_plan(g)), Value::node(0)).storage, Storage::Result);
}

TEST(BufferPlan, DonationRefusedWhenTheDonorIsAlsoReturned) {
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4], %x: f32[4]) donate(%w: 1) {
    %0 = neg(%x) : f32[4]
    return %w, %0
  })");
  EXPECT_EQ(slot(plan_ok(g, ir::unfused_plan(g)), Value::node(0)).storage, Storage::Result);
}

constexpr const char* kSgd = R"(graph @sgd(%w: f32[8,16], %v: f32[8,16], %g: f32[8,16], %lr: f32[])
    donate(%v: 0, %w: 1) {
  %0 = add(%v, %g) : f32[8,16]
  %1 = mul(%0, %lr) : f32[8,16]
  %2 = sub(%w, %1) : f32[8,16]
  return %0, %2
})";

TEST(BufferPlan, OptimizerUpdateWritesInPlaceInItsLoopKernel) {
  const ir::Graph g = parse_ok(kSgd);
  const ir::FusionPlan fusion = fusion_plan(g);
  ASSERT_EQ(fusion.groups.size(), 1u);
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(0)).donor, 1);
  EXPECT_EQ(slot(plan, Value::node(2)).donor, 0);
  EXPECT_TRUE(slot(plan, Value::node(2)).in_place);
  EXPECT_EQ(plan.donated_bytes, 2 * 512);
  EXPECT_EQ(plan.result_bytes, 0);
  EXPECT_THAT(ir::print_buffer_plan(g, plan),
              HasSubstr("%2 f32[8,16] donated %w in place launch 0"));

  const BufferPlan strict = plan_ok(g, fusion, {.in_place_loops = false});
  EXPECT_EQ(strict.donated_bytes, 0);
  EXPECT_EQ(strict.result_bytes, 2 * 512);
  // Unfused, each update is a library kernel that reads its own donor: no donation.
  EXPECT_EQ(plan_ok(g, ir::unfused_plan(g)).donated_bytes, 0);
}

TEST(BufferPlan, InPlaceNeedsTheOutputToDependOnTheDonorElementwise) {
  // One loop kernel writes %1 (independent of %w) and %0 (reads %w): %1 may not overwrite %w.
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,8], %x: f32[4,8]) donate(%w: 1) {
    %0 = add(%w, %x) : f32[4,8]
    %1 = neg(%x) : f32[4,8]
    return %0, %1
  })");
  ir::FusionPlan fusion;
  fusion.groups.push_back({ir::KernelKind::Loop,
                           {0, 1},
                           {Value::param(0), Value::param(1)},
                           {Value::node(0), Value::node(1)},
                           {4, 8}});
  EXPECT_EQ(slot(plan_ok(g, fusion), Value::node(1)).storage, Storage::Result);
  EXPECT_FALSE(ir::can_write_in_place(g, fusion.groups[0], Value::node(1), 0));
  EXPECT_TRUE(ir::can_write_in_place(g, fusion.groups[0], Value::node(0), 0));
}

TEST(BufferPlan, InPlaceRefusedThroughAViewOrAReduction) {
  // A permute of %w folded into the kernel reads %w at the transposed index; a sum of %w reads
  // a whole row of it: neither result may be written over %w.
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,4], %x: f32[4,4]) donate(%w: 0) {
    %0 = permute(%w) {perm=[1,0]} : f32[4,4]
    %1 = add(%0, %x) : f32[4,4]
    %2 = mul(%w, %x) : f32[4,4]
    %3 = sum(%2) {axes=[1], keepdim=true} : f32[4,1]
    return %1, %3
  })");
  ir::FusionGroup grp{ir::KernelKind::Loop, {0, 1}, {Value::param(0), Value::param(1)},
                      {Value::node(1)}, {4, 4}};
  EXPECT_FALSE(ir::can_write_in_place(g, grp, Value::node(1), 0));
  ir::FusionGroup red{ir::KernelKind::Loop, {2, 3}, {Value::param(0), Value::param(1)},
                      {Value::node(3)}, {4, 4}};
  EXPECT_FALSE(ir::can_write_in_place(g, red, Value::node(3), 0));
  // The elementwise product alone may.
  ir::FusionGroup ew{ir::KernelKind::Loop, {2}, {Value::param(0), Value::param(1)},
                     {Value::node(2)}, {4, 4}};
  EXPECT_TRUE(ir::can_write_in_place(g, ew, Value::node(2), 0));
}

TEST(BufferPlan, InPlaceThroughASliceOfAnotherValue) {
  // A replica's update reads its gradient sliced out of the all-reduced bucket %b: the slice
  // reads %b at other indices, but nothing of %w, so the new %w may still overwrite the old.
  // A value computed from %w and then sliced may not.
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4], %b: f32[8]) donate(%w: 0) {
    %0 = slice(%b) {start=[4], stop=[8], step=[1]} : f32[4]
    %1 = sub(%w, %0) : f32[4]
    return %1
  })");
  ir::FusionPlan fusion;
  fusion.groups.push_back({ir::KernelKind::Loop,
                           {0, 1},
                           {Value::param(1), Value::param(0)},
                           {Value::node(1)},
                           {4}});
  EXPECT_TRUE(ir::can_write_in_place(g, fusion.groups[0], Value::node(1), 0));
  const BufferPlan plan = plan_ok(g, fusion);
  EXPECT_EQ(slot(plan, Value::node(1)).donor, 0);
  EXPECT_TRUE(slot(plan, Value::node(1)).in_place);

  const ir::Graph h = parse_ok(R"(graph @f(%w: f32[8], %b: f32[4]) donate(%w: 1) {
    %0 = neg(%w) : f32[8]
    %1 = slice(%0) {start=[4], stop=[8], step=[1]} : f32[4]
    %2 = add(%1, %b) : f32[4]
    %3 = add(%w, %w) : f32[8]
    return %2, %3
  })");
  ir::FusionGroup grp{ir::KernelKind::Loop, {0, 1, 2, 3}, {Value::param(0), Value::param(1)},
                      {Value::node(2), Value::node(3)}, {8}};
  EXPECT_FALSE(ir::can_write_in_place(h, grp, Value::node(3), 0));
}

TEST(BufferPlan, InPlaceRefusedForABroadcastDonor) {
  // %w is read through expand: element i of the output reads several elements of %w.
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4], %x: f32[2,2]) donate(%w: 0) {
    %0 = reshape(%x) {shape=[4]} : f32[4]
    %1 = expand(%w) {shape=[4]} : f32[4]
    %2 = add(%1, %0) : f32[4]
    return %2
  })");
  ir::FusionPlan fusion;
  fusion.groups.push_back({ir::KernelKind::Library, {0}, {Value::param(1)}, {Value::node(0)}, {}});
  fusion.groups.push_back(
      {ir::KernelKind::Loop, {1, 2}, {Value::param(0), Value::node(0)}, {Value::node(2)}, {4}});
  EXPECT_EQ(slot(plan_ok(g, fusion), Value::node(2)).storage, Storage::Result);
}

// A two-layer MLP training step as lazy mode traces it (forward, backward, SGD with momentum).
constexpr const char* kMlpStep = R"(graph @step(%x: f32[64,784], %w1: f32[128,784], %b1: f32[128],
    %w2: f32[10,128], %b2: f32[10], %y: i64[64], %scale: f32[], %v1: f32[128,784], %m: f32[],
    %lr: f32[], %vb1: f32[128], %v2: f32[10,128], %vb2: f32[10], %acc: f32[])
    donate(%v1: 4, %w1: 5, %vb1: 6, %b1: 7, %v2: 8, %w2: 9, %vb2: 10, %b2: 11) {
  %0 = matmul(%x, %w1) {transpose_a=false, transpose_b=true} : f32[64,128]
  %1 = add(%0, %b1) : f32[64,128]
  %2 = relu(%1) : f32[64,128]
  %3 = matmul(%2, %w2) {transpose_a=false, transpose_b=true} : f32[64,10]
  %4 = add(%3, %b2) : f32[64,10]
  %5 = softmax(%4) {axis=1} : f32[64,10]
  %6 = one_hot(%y) {num_classes=10, dtype=f32} : f32[64,10]
  %7 = sub(%5, %6) : f32[64,10]
  %8 = mul(%7, %scale) : f32[64,10]
  %9 = sum(%8) {axes=[0], keepdim=true} : f32[1,10]
  %10 = reshape(%9) {shape=[10]} : f32[10]
  %11 = matmul(%8, %2) {transpose_a=true, transpose_b=false} : f32[10,128]
  %12 = full() {shape=[], dtype=f32, value=0} : f32[]
  %13 = gt(%1, %12) : bool[64,128]
  %14 = matmul(%8, %w2) {transpose_a=false, transpose_b=false} : f32[64,128]
  %15 = where(%13, %14, %12) : f32[64,128]
  %16 = sum(%15) {axes=[0], keepdim=true} : f32[1,128]
  %17 = reshape(%16) {shape=[128]} : f32[128]
  %18 = matmul(%15, %x) {transpose_a=true, transpose_b=false} : f32[128,784]
  %19 = mul(%v1, %m) : f32[128,784]
  %20 = add(%19, %18) : f32[128,784]
  %21 = mul(%20, %lr) : f32[128,784]
  %22 = sub(%w1, %21) : f32[128,784]
  %23 = mul(%vb1, %m) : f32[128]
  %24 = add(%23, %17) : f32[128]
  %25 = mul(%24, %lr) : f32[128]
  %26 = sub(%b1, %25) : f32[128]
  %27 = mul(%v2, %m) : f32[10,128]
  %28 = add(%27, %11) : f32[10,128]
  %29 = mul(%28, %lr) : f32[10,128]
  %30 = sub(%w2, %29) : f32[10,128]
  %31 = mul(%vb2, %m) : f32[10]
  %32 = add(%31, %10) : f32[10]
  %33 = mul(%32, %lr) : f32[10]
  %34 = sub(%b2, %33) : f32[10]
  %35 = cross_entropy(%4, %y) {label_smoothing=0, ignore_index=-100} : f32[]
  %36 = add(%acc, %35) : f32[]
  return %10, %11, %17, %18, %20, %22, %24, %26, %28, %30, %32, %34, %36
})";

TEST(BufferPlan, MlpStepPeakIsFarBelowNaive) {
  const ir::Graph g = parse_ok(kMlpStep);
  // Unfused: intermediates reuse the arena and each velocity takes over its old buffer (its
  // last read comes before the add that writes it); a weight's update reads the weight itself.
  // fuse() (here with fusion off) schedules cross_entropy, which checks labels, before them.
  const ir::FusionPlan unfused = fusion_plan(g, {.enabled = false});
  const BufferPlan u = plan_ok(g, unfused);
  expect_no_aliasing(g, unfused, u);
  EXPECT_EQ(u.arena_bytes, u.live_peak_bytes);
  EXPECT_EQ(u.donated_bytes, 4 * (128 * 784 + 128 + 10 * 128 + 10));
  EXPECT_LT(u.arena_bytes + u.result_bytes, u.naive_bytes * 6 / 10) << ir::print_buffer_plan(g, u);
  // Fused: every weight and velocity update is written in place, 2 x (w1 + b1 + w2 + b2), and
  // the arena holds only the small activations.
  const ir::FusionPlan fused = fusion_plan(g);
  const BufferPlan f = plan_ok(g, fused);
  expect_no_aliasing(g, fused, f);
  EXPECT_GE(f.arena_bytes, f.live_peak_bytes);
  EXPECT_EQ(f.donated_bytes, 2 * 4 * (128 * 784 + 128 + 10 * 128 + 10));
  EXPECT_LT(f.arena_bytes, 128 * 1024);
  EXPECT_LT(f.arena_bytes + f.result_bytes, f.naive_bytes * 4 / 10) << ir::print_buffer_plan(g, f);
}

// A weight updated in place during the backward pass, before the embedding's gradient, the last
// launch that checks ids: the forward embedding checked the same ids against the same rows, so
// that check cannot fail and the weight is updated in place. When the gradient's ids are
// others, it can, and the update gets a buffer of its own.
TEST(BufferPlan, AnIdCheckAnEarlierLaunchMadeDoesNotHoldDonationsBack) {
  for (const auto& [ids, in_place] : {std::pair{"%ids", true}, {"%other", false}}) {
    SCOPED_TRACE(ids);
    // The embedding's gradient waits for %9, which comes after the update of w.
    const ir::Graph g = parse_ok(fmt::format(R"(graph @f(%t: f32[8,4], %w: f32[4,4], %u: f32[4,4], %ids: i64[6], %other: i64[6], %lr: f32[]) donate(%w: 0) {{
      %0 = embedding(%t, %ids) : f32[6,4]
      %1 = matmul(%0, %w) {{transpose_a=false, transpose_b=false}} : f32[6,4]
      %2 = exp(%1) : f32[6,4]
      %3 = matmul(%2, %w) {{transpose_a=false, transpose_b=true}} : f32[6,4]
      %4 = matmul(%0, %2) {{transpose_a=true, transpose_b=false}} : f32[4,4]
      %5 = mul(%4, %lr) : f32[4,4]
      %6 = sub(%w, %5) : f32[4,4]
      %7 = tanh(%3) : f32[6,4]
      %8 = matmul(%7, %u) {{transpose_a=false, transpose_b=false}} : f32[6,4]
      %9 = tanh(%8) : f32[6,4]
      %10 = embedding_grad(%9, {}) {{num_weights=8}} : f32[8,4]
      return %6, %10
    }})", ids));
    const ir::FusionPlan fused = fusion_plan(g);
    const BufferPlan plan = plan_ok(g, fused);
    EXPECT_EQ(slot(plan, g.results()[0]).storage == ir::Storage::Donated, in_place)
        << ir::print_fusion_plan(g, fused) << ir::print_buffer_plan(g, plan);
  }
}

TEST(BufferPlan, ZeroSizedValuesTakeNoSpace) {
  const ir::Graph g = parse_ok(R"(graph @f(%x: f32[0,4]) {
    %0 = exp(%x) : f32[0,4]
    %1 = sum(%0) {axes=[0], keepdim=false} : f32[4]
    return %1
  })");
  const BufferPlan plan = plan_ok(g, ir::unfused_plan(g));
  EXPECT_EQ(plan.arena_bytes, 0);
  EXPECT_EQ(plan.result_bytes, 16);
}

// Random DAGs of elementwise ops, reductions and matmuls over square matrices, fused and not:
// every plan verifies and no launch writes over a live value.
ir::Graph random_graph(std::mt19937& rng, int nodes) {
  ir::Graph g("random");
  std::vector<Value> pool{g.add_param({DType::F32, {8, 8}}), g.add_param({DType::F32, {8, 8}})};
  for (int i = 0; i < nodes; ++i) {
    auto pick = [&] {
      return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
    };
    switch (rng() % 4) {
      case 0:
        pool.push_back(g.add(ir::Op::Exp, {pick()}, ir::NoAttrs{}));
        break;
      case 1:
        pool.push_back(g.add(ir::Op::Add, {pick(), pick()}, ir::NoAttrs{}));
        break;
      case 2:
        pool.push_back(g.add(ir::Op::MatMul, {pick(), pick()}, ir::MatMulAttrs{}));
        break;
      default: {
        const Value s = g.add(ir::Op::Sum, {pick()}, ir::ReduceAttrs{{1}, true});
        pool.push_back(g.add(ir::Op::Mul, {pick(), s}, ir::NoAttrs{}));
      }
    }
  }
  g.set_results({pool.back(), pool[pool.size() / 2], pool[pool.size() / 2]});
  if (!pool[pool.size() / 2].is_param()) g.add_donation({0, 1});
  return g;
}

TEST(BufferPlan, RandomGraphsNeverAlias) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const ir::Graph g = random_graph(rng, 4 + trial % 40);
    ir::verify(g);
    for (const ir::FusionPlan& fusion : {fusion_plan(g), ir::unfused_plan(g)}) {
      const BufferPlan plan = plan_ok(g, fusion);
      expect_no_aliasing(g, fusion, plan);
      EXPECT_LE(plan.live_peak_bytes, plan.arena_bytes);
      EXPECT_LE(plan.arena_bytes, plan.naive_bytes + 64 * static_cast<int64_t>(plan.slots.size()));
    }
  }
}

// The memory report counts by definition: every parameter's bytes, the donors' bytes, the fresh
// results and the arena, and the planned peak as their sum.
TEST(MemoryReport, CountsInputsDonationsResultsAndTheArena) {
  const ir::Graph g = parse_ok(R"(graph @f(%w: f32[4,4], %x: f32[4,4], %b: f32[2]) donate(%w: 0) {
    %0 = neg(%w) : f32[4,4]
    %1 = matmul(%0, %x) {transpose_a=false, transpose_b=false} : f32[4,4]
    %2 = exp(%x) : f32[4,4]
    %3 = matmul(%2, %x) {transpose_a=false, transpose_b=false} : f32[4,4]
    return %1, %3
  })");
  const BufferPlan plan = plan_ok(g, ir::unfused_plan(g));
  const ir::MemoryReport r = ir::memory_report(g, plan);
  EXPECT_EQ(r.inputs, 3);
  EXPECT_EQ(r.input_bytes, 64 + 64 + 8);
  EXPECT_EQ(r.donated_inputs, 1);
  EXPECT_EQ(r.donated_bytes, 64);
  EXPECT_EQ(r.fresh_result_bytes, plan.result_bytes);
  EXPECT_EQ(r.fresh_result_bytes, 64);  // %3; %1 goes into %w's buffer
  EXPECT_EQ(r.arena_bytes, plan.arena_bytes);
  EXPECT_GT(r.arena_bytes, 0);  // %0 and %2
  EXPECT_EQ(r.planned_peak_bytes(), 136 + r.arena_bytes + 64);
  EXPECT_EQ(ir::print_memory_report(ir::MemoryReport{.inputs = 3,
                                                    .donated_inputs = 1,
                                                    .input_bytes = 3 << 20,
                                                    .donated_bytes = 1 << 20,
                                                    .fresh_result_bytes = 1 << 19,
                                                    .arena_bytes = 5 << 20,
                                                    .live_peak_bytes = 4 << 20,
                                                    .naive_bytes = 9 << 20}),
            "memory: inputs 3.00 MB in 3 tensors (1.00 MB in 1 donated to results), fresh "
            "results 0.50 MB, intermediates 5.00 MB (live peak 4.00 MB; 9.00 MB without reuse), "
            "planned peak 8.50 MB\n");
}

}  // namespace
}  // namespace lt::passes
