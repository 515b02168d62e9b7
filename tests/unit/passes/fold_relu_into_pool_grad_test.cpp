#include "passes/fold_relu_into_pool_grad.h"

#include <gtest/gtest.h>

#include <variant>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// The backward of max_pool2d(relu(a)): the first run drops the where that masks the pool's
// gradient and sets through_relu; the second run finds the pool's gradient read by no where
// (the result is the gradient itself), so nothing is left to fold.
TEST(FoldReluIntoPoolGrad, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @f(%a: f32[2,4,4,16], %gy: f32[2,2,2,16]) {
      %0 = relu(%a) : f32[2,4,4,16]
      %1 = full() {shape=[], dtype=f32, value=0} : f32[]
      %2 = max_pool2d_grad(%0, %gy) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true, channels_last=true} : f32[2,4,4,16]
      %3 = gt(%a, %1) : bool[2,4,4,16]
      %4 = where(%3, %2, %1) : f32[2,4,4,16]
      return %4
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(fold_relu_into_pool_grad, g, true);
  const ir::Node& grad = testing::result_node(g);
  ASSERT_EQ(grad.op, ir::Op::MaxPool2dGrad) << ir::print(g);
  EXPECT_TRUE(std::get<ir::PoolAttrs>(grad.attrs).through_relu);
  EXPECT_EQ(count_ops(g, ir::Op::Where), 0);
  EXPECT_EQ(result_types(g), types);
}

// A where whose 0 is -0 (the kernel writes +0) or whose comparison is >= 0 is not the ReLU's
// mask: kept.
TEST(FoldReluIntoPoolGrad, KeepsOtherMasks) {
  ir::Graph g = parse_ok(R"(
    graph @f(%a: f32[2,4,4,16], %gy: f32[2,2,2,16]) {
      %0 = full() {shape=[], dtype=f32, value=0} : f32[]
      %1 = full() {shape=[], dtype=f32, value=-0} : f32[]
      %2 = gt(%a, %0) : bool[2,4,4,16]
      %3 = max_pool2d_grad(%a, %gy) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true, channels_last=true} : f32[2,4,4,16]
      %4 = where(%2, %3, %1) : f32[2,4,4,16]
      %5 = ge(%a, %0) : bool[2,4,4,16]
      %6 = max_pool2d_grad(%a, %gy) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true, channels_last=true} : f32[2,4,4,16]
      %7 = where(%5, %6, %0) : f32[2,4,4,16]
      return %4, %7
    })");
  run_checked(fold_relu_into_pool_grad, g, false);
}

}  // namespace
}  // namespace lt::passes
