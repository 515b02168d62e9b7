#include <gtest/gtest.h>

#include "lt/lt.h"
#include "tests/support/all_close.h"

namespace lt {
namespace {

TEST(Smoke, AddBroadcastAndBackward) {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  Tensor b = from_vector<float>({10, 20, 30}, {3}).requires_grad_();
  Tensor y = sum(a * b + 1.0);
  EXPECT_FLOAT_EQ(y.item<float>(), 10 + 40 + 90 + 40 + 100 + 180 + 6);
  y.backward();
  EXPECT_TRUE(testing::AllClose(a.grad(), from_vector<float>({10, 20, 30, 10, 20, 30}, {2, 3})));
  EXPECT_TRUE(testing::AllClose(b.grad(), from_vector<float>({5, 7, 9}, {3})));
}

}  // namespace
}  // namespace lt

namespace lt {
namespace {

TEST(Smoke, IntegerDivisionEdgeCases) {
  Tensor a = from_vector<int32_t>({INT32_MIN, 7, -7}, {3});
  Tensor b = from_vector<int32_t>({-1, 2, 2}, {3});
  EXPECT_EQ(div(a, b).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, 3, -3}));
  Tensor z = from_vector<int32_t>({1, 0, 1}, {3});
  EXPECT_THROW(div(a, z), Error);
}

}  // namespace
}  // namespace lt
