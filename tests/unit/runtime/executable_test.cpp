// rt::Executable over hand-built slots (library launches only: no JIT in the runtime suite):
// arena slots, reuse of the arena across runs, results, and the donation contract of run().
#include "runtime/executable.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "ir/error.h"

namespace lt::rt {
namespace {

const TensorType kVec{DType::F32, {4}};

BufferPtr make(std::vector<float> v) {
  BufferPtr b = Buffer::allocate(v.size() * sizeof(float));
  std::memcpy(b->data(), v.data(), v.size() * sizeof(float));
  return b;
}

std::vector<float> read(const BufferPtr& b) {
  std::vector<float> v(b->bytes() / sizeof(float));
  std::memcpy(v.data(), b->data(), b->bytes());
  return v;
}

Launch library(ir::Op op, std::vector<int> in, std::vector<int> out) {
  Launch l;
  l.op = op;
  l.attrs = ir::NoAttrs{};
  l.in_slots = std::move(in);
  l.out_slots = std::move(out);
  return l;
}

Slot param() { return {Slot::Kind::Param, kVec}; }
Slot arena(int64_t offset) { return {Slot::Kind::Arena, kVec, offset}; }
Slot result(int donor = -1) { return {Slot::Kind::Owned, kVec, 0, donor}; }

// r = exp(neg(exp(neg(x)))) + x, the four intermediates ping-ponging between two arena slots.
std::shared_ptr<Executable> chain() {
  std::vector<Slot> slots{param(), arena(0), arena(64), arena(0), arena(64), result()};
  std::vector<Launch> launches{library(ir::Op::Neg, {0}, {1}), library(ir::Op::Exp, {1}, {2}),
                               library(ir::Op::Neg, {2}, {3}), library(ir::Op::Exp, {3}, {4}),
                               library(ir::Op::Add, {4, 0}, {5})};
  return std::make_shared<Executable>(std::move(slots), std::move(launches), std::vector<int>{5},
                                      MemoryPlan{128, 128, 16, 0, 80}, nullptr);
}

float chain_of(float x) { return std::exp(-std::exp(-x)) + x; }

TEST(Executable, ArenaIsReusedAcrossRunsAndFreedByEach) {
  const auto exe = chain();
  for (float base : {0.0f, 1.0f, -2.0f}) {
    const std::vector<float> x{base, base + 0.5f, base + 1, base + 2};
    const std::vector<BufferPtr> params{make(x)};
    const int64_t live = Buffer::live_bytes();
    const std::vector<BufferPtr> out = exe->run(params);
    EXPECT_EQ(Buffer::live_bytes(), live + 16);  // the result only: the arena is gone
    ASSERT_EQ(out.size(), 1u);
    const std::vector<float> r = read(out[0]);
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r[i], chain_of(x[i]));
  }
  EXPECT_EQ(exe->run_stats().runs, 3);
  EXPECT_EQ(exe->memory().arena_bytes, 128);
}

TEST(Executable, ResultsOutliveTheNextRun) {
  const auto exe = chain();
  const std::vector<BufferPtr> a = exe->run(std::vector<BufferPtr>{make({1, 2, 3, 4})});
  const std::vector<BufferPtr> b = exe->run(std::vector<BufferPtr>{make({5, 6, 7, 8})});
  EXPECT_NE(a[0], b[0]);
  EXPECT_FLOAT_EQ(read(a[0])[0], chain_of(1));
  EXPECT_FLOAT_EQ(read(b[0])[0], chain_of(5));
}

TEST(Executable, ConcurrentRunsGetArenasOfTheirOwn) {
  const auto exe = chain();
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const float x = static_cast<float>(t) + i * 0.001f;
        const std::vector<BufferPtr> out = exe->run(std::vector<BufferPtr>{make({x, x, x, x})});
        for (float r : read(out[0])) bad[t] += std::abs(r - chain_of(x)) > 1e-5f;
      }
    });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  EXPECT_EQ(exe->run_stats().runs, 800);
}

// r = neg(x), which the plan lets parameter w's buffer hold (w itself is not read).
std::shared_ptr<Executable> donating() {
  return std::make_shared<Executable>(std::vector<Slot>{param(), param(), result(0)},
                                      std::vector<Launch>{library(ir::Op::Neg, {1}, {2})},
                                      std::vector<int>{2}, MemoryPlan{0, 0, 0, 16, 16}, nullptr);
}

TEST(Executable, DonationTakesTheParameterBufferWhenOnlyTheCallerHoldsIt) {
  const auto exe = donating();
  std::vector<BufferPtr> params{make({1, 1, 1, 1}), make({1, 2, 3, 4})};
  const Buffer* w = params[0].get();
  const long owned[] = {1, 0};
  const std::vector<BufferPtr> out = exe->run(params, owned);
  EXPECT_EQ(out[0].get(), w);
  EXPECT_EQ(read(out[0]), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(exe->run_stats().donations_taken, 1);
}

TEST(Executable, DonatedParameterStillHeldElsewhereIsNotOverwritten) {
  const auto exe = donating();
  std::vector<BufferPtr> params{make({1, 1, 1, 1}), make({1, 2, 3, 4})};
  const BufferPtr elsewhere = params[0];  // e.g. another tensor sharing the old value
  const long owned[] = {1, 0};
  const std::vector<BufferPtr> out = exe->run(params, owned);
  EXPECT_NE(out[0], elsewhere);
  EXPECT_EQ(read(elsewhere), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(read(out[0]), (std::vector<float>{-1, -2, -3, -4}));
  EXPECT_EQ(exe->run_stats().donations_refused, 1);
}

TEST(Executable, DonationNeedsTheCallersConsent) {
  const auto exe = donating();
  const std::vector<BufferPtr> params{make({1, 1, 1, 1}), make({1, 2, 3, 4})};
  EXPECT_NE(exe->run(params)[0], params[0]);  // no owned_refs: never
  const long none[] = {0, 0};
  EXPECT_NE(exe->run(params, none)[0], params[0]);
  EXPECT_EQ(read(params[0]), (std::vector<float>{1, 1, 1, 1}));
  EXPECT_EQ(exe->run_stats().donations_refused, 2);
}

TEST(Executable, DonationRefusedWhenTheBufferIsAlsoAnotherParameter) {
  const auto exe = donating();
  const BufferPtr same = make({1, 2, 3, 4});
  std::vector<BufferPtr> params{same, same};
  const long owned[] = {3, 0};  // a caller counting every reference: still not the only reader
  const std::vector<BufferPtr> out = exe->run(params, owned);
  EXPECT_NE(out[0], same);
  EXPECT_EQ(read(same), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Executable, AReturnedParameterIsTheCallersBuffer) {
  std::vector<Slot> slots{param(), arena(0), result()};
  std::vector<Launch> launches{library(ir::Op::Exp, {0}, {1}), library(ir::Op::Neg, {1}, {2})};
  const Executable exe(std::move(slots), std::move(launches), std::vector<int>{2, 0, 2},
                       MemoryPlan{64, 64, 16, 0, 32}, nullptr);
  const std::vector<BufferPtr> params{make({0, 0, 0, 0})};
  const std::vector<BufferPtr> out = exe.run(params);
  EXPECT_EQ(out[1], params[0]);
  EXPECT_EQ(out[0], out[2]);
  EXPECT_EQ(read(out[0]), (std::vector<float>{-1, -1, -1, -1}));
}

TEST(Executable, EmptyValuesNeedNoArena) {
  const TensorType empty{DType::F32, {0, 4}};
  std::vector<Slot> slots{{Slot::Kind::Param, empty}, {Slot::Kind::Arena, empty},
                          {Slot::Kind::Owned, empty}};
  std::vector<Launch> launches{library(ir::Op::Exp, {0}, {1}), library(ir::Op::Neg, {1}, {2})};
  const Executable exe(std::move(slots), std::move(launches), std::vector<int>{2},
                       MemoryPlan{0, 0, 0, 0, 0}, nullptr);
  const std::vector<BufferPtr> out = exe.run(std::vector<BufferPtr>{Buffer::allocate(0)});
  ASSERT_TRUE(out[0]);
  EXPECT_EQ(out[0]->bytes(), 0u);
}

// A collective's operand written straight into the buffer of the result the collective writes:
// the buffer is made by the operand's launch, and the result is a fresh buffer each run.
TEST(Executable, AnOperandSharingItsCollectivesResultIsWrittenThere) {
  Slot operand = result();
  operand.shares = 2;
  std::vector<Slot> slots{param(), operand, result()};
  Launch start = library(ir::Op::AllReduce, {1}, {2});
  start.kind = Launch::Kind::Start;
  start.attrs = ir::AllReduceAttrs{ir::ReduceKind::Sum};
  Launch done;
  done.kind = Launch::Kind::Done;
  done.op = ir::Op::AllReduce;
  done.in_slots = {2};
  done.start = 1;
  const Executable exe(std::move(slots), {library(ir::Op::Exp, {0}, {1}), start, done}, {2},
                       MemoryPlan{0, 0, 16, 0, 32}, nullptr);
  const std::vector<BufferPtr> params{make({0, 1, 2, 3})};
  const int64_t live = Buffer::live_bytes();
  Buffer::reset_peak();
  const std::vector<BufferPtr> a = exe.run(params);  // one rank: exp(x)
  EXPECT_EQ(Buffer::peak_bytes(), live + 16);  // one buffer for the operand and the result
  const std::vector<BufferPtr> b = exe.run(params);
  EXPECT_NE(a[0], b[0]);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(read(a[0])[i], std::exp(static_cast<float>(i)));
  EXPECT_EQ(read(a[0]), read(b[0]));
}

TEST(Executable, RejectsSharingABufferThatIsNotALaterResult) {
  Slot operand = result();
  operand.shares = 2;
  try {
    const Executable exe({param(), operand, arena(0)}, {library(ir::Op::Exp, {0}, {1})}, {1},
                         MemoryPlan{64, 64, 16, 0, 32}, nullptr);
    FAIL() << "accepted";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("slot 1: cannot share slot 2's buffer"));
  }
}

TEST(Executable, RejectsResultsInTheArena) {
  EXPECT_THROW(Executable({param(), arena(0)}, {library(ir::Op::Neg, {0}, {1})}, {1},
                          MemoryPlan{64, 64, 0, 0, 16}, nullptr),
               InternalError);
}

}  // namespace
}  // namespace lt::rt
