#include <gtest/gtest.h>

#include <limits>

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

// torch.div: integers divide in f32 (true division; the IR's integer division, which wraps
// INT32_MIN / -1 and throws on a zero divisor, is BinaryKernel's to test).
TEST(Smoke, IntegerDivisionIsTrueDivision) {
  Tensor a = from_vector<int32_t>({INT32_MIN, 7, -7}, {3});
  Tensor b = from_vector<int32_t>({-1, 2, 2}, {3});
  EXPECT_EQ(div(a, b).dtype(), DType::F32);
  EXPECT_EQ(div(a, b).to_vector<float>(), (std::vector<float>{2147483648.0f, 3.5f, -3.5f}));
  Tensor z = from_vector<int32_t>({1, 0, 1}, {3});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(div(a, z).to_vector<float>(), (std::vector<float>{-2147483648.0f, inf, -7.0f}));
}

}  // namespace
}  // namespace lt
