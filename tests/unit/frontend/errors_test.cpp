// The exact text of user-facing errors: op, reason, operand types, and the caller's file:line.
#include <gtest/gtest.h>

#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::error_of;

TEST(Errors, BroadcastMismatchNamesOpOperandsAndLine) {
  Tensor a = zeros({4, 8}), b = zeros({3});
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { add(a, b); });
  EXPECT_EQ(msg, "add: cannot broadcast f32[4,8] with f32[3] (operands: f32[4,8], f32[3]) at "
                 "errors_test.cpp:" + std::to_string(line));
}

TEST(Errors, ReadingAnUndefinedTensor) {
  const Tensor none;
  const int line = __LINE__ + 1;
  EXPECT_EQ(error_of([&] { none.to_vector<float>(); }),
            "to_vector: the tensor is undefined at errors_test.cpp:" + std::to_string(line));
  EXPECT_EQ(error_of([&] { none.item<float>(); }),
            "item: the tensor is undefined at errors_test.cpp:" + std::to_string(line + 2));
}

TEST(Errors, OperatorsReportTheUsersLine) {
  Tensor a = zeros({2, 3}), b = zeros({2, 2});
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { Tensor c = a * b; });
  EXPECT_EQ(msg, "mul: cannot broadcast f32[2,3] with f32[2,2] (operands: f32[2,3], f32[2,2]) at "
                 "errors_test.cpp:" + std::to_string(line));
}

TEST(Errors, MatmulContraction) {
  Tensor a = zeros({2, 3}), b = zeros({4, 5});
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { matmul(a, b); });
  EXPECT_EQ(msg, "matmul: contraction sizes differ: 3 vs 4 (f32[2,3] x f32[4,5]) (operands: "
                 "f32[2,3], f32[4,5]) at errors_test.cpp:" + std::to_string(line));
}

// Elementwise ops promote (promotion_test.cpp); matmul does not, as in PyTorch.
TEST(Errors, DtypeMismatch) {
  Tensor a = zeros({2, 2}), b = zeros({2, 2}, DType::F64);
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { matmul(a, b); });
  EXPECT_EQ(msg, "matmul: expected scalar type Float but found Double: f32[2,2] vs f64[2,2] "
                 "(operands: f32[2,2], f64[2,2]) at errors_test.cpp:" + std::to_string(line));
}

TEST(Errors, ReshapeCount) {
  Tensor a = zeros({2, 3});
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { reshape(a, {4, 2}); });
  EXPECT_EQ(msg, "reshape: cannot reshape f32[2,3] to [4,2] (operands: f32[2,3]) at "
                 "errors_test.cpp:" + std::to_string(line));
}

TEST(Errors, EmbeddingIdOutOfRangeIsCaughtAtTheCall) {
  Tensor table = zeros({10, 4});
  Tensor ids = from_vector<int64_t>({1, 12}, {2});
  std::string msg = error_of([&] { embedding(table, ids); });
  EXPECT_NE(msg.find("embedding"), std::string::npos) << msg;
  EXPECT_NE(msg.find("12"), std::string::npos) << msg;
  EXPECT_NE(msg.find("errors_test.cpp:"), std::string::npos) << msg;
}

TEST(Errors, ReduceAxisOutOfRange) {
  Tensor a = zeros({2, 3});
  const int line = __LINE__ + 1;
  std::string msg = error_of([&] { sum(a, {2}); });
  EXPECT_EQ(msg, "sum: axis 2 out of range for rank 2 (operands: f32[2,3]) at errors_test.cpp:" +
                     std::to_string(line));
}

TEST(Errors, ConvChannels) {
  Tensor x = zeros({1, 3, 8, 8}), w = zeros({4, 2, 3, 3});
  std::string msg = error_of([&] { conv2d(x, w); });
  EXPECT_EQ(msg.substr(0, msg.find(" at ")),
            "conv2d: weight [4,2,3,3] expects 2 input channels, input has 3 (operands: "
            "f32[1,3,8,8], f32[4,2,3,3])");
}

TEST(Errors, InPlaceShapeChangeIsRefused) {
  Tensor a = zeros({3}), b = zeros({2, 3});
  std::string msg = error_of([&] { a.add_(b); });
  EXPECT_EQ(msg.substr(0, msg.find(" at ")), "add_: result f32[2,3] would change the type of f32[3]");
}

}  // namespace
}  // namespace lt
