// Dims against std::vector<int64_t>: the same operations, in random sequences that cross the
// inline capacity both ways, must leave the same contents.
#include "ir/dims.h"

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

namespace lt {
namespace {

std::vector<int64_t> as_vector(const Dims& d) { return {d.begin(), d.end()}; }

TEST(Dims, RandomOperationsMatchStdVector) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    Dims d;
    std::vector<int64_t> v;
    for (int step = 0; step < 40; ++step) {
      const int64_t x = static_cast<int64_t>(rng() % 100);
      const size_t at = v.empty() ? 0 : rng() % (v.size() + 1);
      switch (rng() % 11) {
        case 0:
          d.push_back(x);
          v.push_back(x);
          break;
        case 1:
          if (!v.empty()) {
            d.pop_back();
            v.pop_back();
          }
          break;
        case 2:
          d.insert(d.begin() + at, x);
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), x);
          break;
        case 3: {
          const size_t n = rng() % 5;
          d.insert(d.begin() + at, n, x);
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), n, x);
          break;
        }
        case 4: {  // a range out of the container itself
          const size_t from = v.empty() ? 0 : rng() % v.size();
          const size_t to = from + (v.size() - from) / 2;
          d.insert(d.begin() + at, d.begin() + from, d.begin() + to);
          const std::vector<int64_t> mid(v.begin() + static_cast<std::ptrdiff_t>(from),
                                         v.begin() + static_cast<std::ptrdiff_t>(to));
          v.insert(v.begin() + static_cast<std::ptrdiff_t>(at), mid.begin(), mid.end());
          break;
        }
        case 5:
          if (at < v.size()) {
            d.erase(d.begin() + at);
            v.erase(v.begin() + static_cast<std::ptrdiff_t>(at));
          }
          break;
        case 6: {
          const size_t to = at + (v.size() - at) / 2;
          d.erase(d.begin() + at, d.begin() + to);
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(at),
                  v.begin() + static_cast<std::ptrdiff_t>(to));
          break;
        }
        case 7: {
          const size_t n = rng() % 12;
          d.resize(n, x);
          v.resize(n, x);
          break;
        }
        case 8: {  // copies and moves, from inline and from heap storage
          Dims copy = d;
          Dims moved = std::move(copy);
          EXPECT_TRUE(copy.empty());
          d = moved;
          Dims other{1, 2, 3};
          other = std::move(moved);
          d = std::move(other);
          break;
        }
        case 9:
          d.reserve(rng() % 16);
          break;
        case 10:
          if (rng() % 8 == 0) {
            d.clear();
            v.clear();
          }
          break;
      }
      ASSERT_EQ(as_vector(d), v) << "trial " << trial << " step " << step;
      ASSERT_GE(d.capacity(), d.size());
    }
  }
}

TEST(Dims, ConstructionAndComparisonFollowStdVector) {
  EXPECT_EQ(as_vector(Dims(3)), std::vector<int64_t>(3));
  EXPECT_EQ(as_vector(Dims(2, 5)), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(as_vector(Dims{2, 5}), (std::vector<int64_t>{2, 5}));
  const std::vector<int64_t> eight{1, 2, 3, 4, 5, 6, 7, 8};
  const Dims from_vector = eight;
  EXPECT_EQ(static_cast<std::vector<int64_t>>(from_vector), eight);
  EXPECT_EQ((Dims{1, 2}), (Dims{1, 2}));
  EXPECT_NE((Dims{1, 2}), (Dims{1, 2, 0}));
  EXPECT_LT((Dims{1, 2}), (Dims{1, 3}));
  EXPECT_LT((Dims{1, 2}), (Dims{1, 2, 0}));
  EXPECT_EQ(Dims::kInline, 6u);
  EXPECT_EQ(Dims(eight.begin(), eight.begin() + 6).capacity(), Dims::kInline);  // no heap
}

}  // namespace
}  // namespace lt
