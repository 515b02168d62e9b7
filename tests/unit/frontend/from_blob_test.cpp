// lt::from_blob: a tensor over memory that stays its owner's (libtorch's from_blob), read and
// written in place, eagerly and lazily, as PyTorch's tensors over a numpy array are.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <new>
#include <optional>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::error_of;

/// 64-byte aligned floats, and a view of them `shift` elements on (so not 64-byte aligned).
struct Memory {
  explicit Memory(size_t n, size_t shift = 0)
      : base(static_cast<float*>(::operator new ((n + 16) * sizeof(float), std::align_val_t{64}))),
        data(base + shift) {
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<float>(i);
  }
  ~Memory() { ::operator delete (base, std::align_val_t{64}); }
  float* base;
  float* data;
};

class FromBlob : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) mode_.emplace(Mode::Lazy);
  }
  void TearDown() override {
    mark_step();
    mode_.reset();
  }
  bool lazy() const { return GetParam(); }

 private:
  std::optional<ModeGuard> mode_;
};

TEST_P(FromBlob, ReadsWhatIsWrittenToTheMemory) {
  Memory m(6);
  const Tensor t = from_blob(m.data, {2, 3}, DType::F32);
  m.data[4] = 40;
  EXPECT_EQ(sum(t).item<double>(), 0 + 1 + 2 + 3 + 40 + 5);
}

TEST_P(FromBlob, InPlaceOpsAndWritesThroughViewsGoIntoTheMemory) {
  Memory m(6);
  Tensor t = from_blob(m.data, {2, 3}, DType::F32);
  t.add_(1);
  Tensor row = select(t, 0, 1);
  row.mul_(10);
  // Lazily the values arrive when the step runs.
  if (lazy()) {
    EXPECT_EQ(m.data[0], 0);
    mark_step();
  }
  EXPECT_EQ(std::vector<float>(m.data, m.data + 6), (std::vector<float>{1, 2, 3, 40, 50, 60}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 40, 50, 60}));
}

TEST_P(FromBlob, ValuesReadBeforeAnInPlaceWriteKeepTheOldData) {
  Memory m(4);
  Tensor t = from_blob(m.data, {4}, DType::F32);
  const Tensor before = t * 3.0;
  t.add_(1);
  // Reading t alone writes its memory, which `before`'s pending graph reads: the sync runs it
  // too.
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{0, 3, 6, 9}));
  EXPECT_EQ(m.data[3], 4);
}

TEST_P(FromBlob, MemoryThatIsNotSixtyFourByteAlignedWorksInCompiledSteps) {
  Memory m(37, /*shift=*/1);
  Tensor t = from_blob(m.data, {37}, DType::F32);
  const Tensor total = sum(exp(t * 0.01));
  t.mul_(2);
  mark_step();
  double want = 0;
  for (int i = 0; i < 37; ++i) want += std::exp(static_cast<float>(i) * 0.01f);
  EXPECT_NEAR(total.item<double>(), want, 1e-4);
  EXPECT_EQ(m.data[36], 72);
}

TEST_P(FromBlob, AnotherTensorDoesNotShareTheMemory) {
  Memory m(3);
  const Tensor t = from_blob(m.data, {3}, DType::F32);
  Tensor copy = clone(t);
  mark_step();
  m.data[0] = 42;
  copy.add_(1);
  mark_step();
  EXPECT_EQ(copy.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(m.data[0], 42);
  EXPECT_EQ(m.data[1], 1);
}

TEST_P(FromBlob, TrainsAParameterInItsMemory) {
  Memory m(3);
  Tensor w = from_blob(m.data, {3}, DType::F32);
  w.requires_grad_();
  sum(w * w).backward();
  {
    NoGradGuard no_grad;
    w.sub_(w.grad() * 0.25);  // w - 0.5 w
  }
  mark_step();
  EXPECT_EQ(std::vector<float>(m.data, m.data + 3), (std::vector<float>{0, 0.5, 1}));
}

TEST_P(FromBlob, TheDeleterRunsWhenNoTensorReadsTheMemory) {
  Memory m(2);
  int deleted = 0;
  {
    Tensor t = from_blob(m.data, {2}, DType::F32, [&](void* p) {
      EXPECT_EQ(p, m.data);
      ++deleted;
    });
    const Tensor alias = t.detach();
    t = Tensor();
    EXPECT_EQ(deleted, 0);
    EXPECT_EQ(alias.to_vector<float>(), (std::vector<float>{0, 1}));
  }
  mark_step();
  EXPECT_EQ(deleted, 1);
}

INSTANTIATE_TEST_SUITE_P(Modes, FromBlob, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Lazy" : "Eager"; });

TEST(FromBlobLazy, AFailedStepLeavesTheMemoryAsItWas) {
  Memory m(3);
  Tensor t = from_blob(m.data, {3}, DType::F32);
  const Tensor ids = from_vector<int64_t>({7}, {1});  // out of range for a table of 3 rows
  ModeGuard lazy(Mode::Lazy);
  t.add_(1);
  const Tensor looked_up = embedding(reshape(t, {3, 1}), ids);
  EXPECT_THROW(mark_step(), Error);
  EXPECT_EQ(std::vector<float>(m.data, m.data + 3), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{0, 1, 2}));
}

TEST(FromBlobErrors, MemoryNotAlignedToItsElements) {
  Memory m(4);
  void* odd = reinterpret_cast<char*>(m.data) + 2;
  EXPECT_THAT(error_of([&] { from_blob(odd, {2}, DType::F32); }),
              ::testing::StartsWith(fmt::format(
                  "from_blob: data at {} is not aligned to its 4-byte elements at ", odd)));
}

}  // namespace
}  // namespace lt
