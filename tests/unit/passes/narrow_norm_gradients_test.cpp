#include "passes/narrow_norm_gradients.h"

#include <gtest/gtest.h>

#include <variant>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// A batch norm gradient whose dx only two casts to bf16 read: after the first run it writes
// bf16 itself and the casts are gone, so the second run finds no cast to narrow into it.
TEST(NarrowNormGradients, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: bf16[2,3,4], %g: f32[3], %m: f32[3], %s: f32[3], %gy: f32[2,3,4]) {
      %0:3 = batch_norm_grad(%x, %g, %m, %s, %gy) {axis=1} : (f32[2,3,4], f32[3], f32[3])
      %1 = cast(%0#0) {to=bf16} : bf16[2,3,4]
      %2 = cast(%0#0) {to=bf16} : bf16[2,3,4]
      return %1, %2, %0#1, %0#2
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(narrow_norm_gradients, g, true);
  ASSERT_EQ(count_ops(g, ir::Op::BatchNormGrad), 1);
  const ir::Node& grad = g.node(g.results()[0].def);
  ASSERT_EQ(grad.op, ir::Op::BatchNormGrad) << ir::print(g);
  EXPECT_TRUE(std::get<ir::BatchNormGradAttrs>(grad.attrs).bf16_dx);
  EXPECT_EQ(g.results()[0], g.results()[1]);
  EXPECT_EQ(result_types(g), types);
}

// dx read by something other than a cast to bf16 (an exp), or cast to f16, stays f32.
TEST(NarrowNormGradients, KeepsDxOtherReadersNeedInF32) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: bf16[2,3,4], %g: f32[3], %m: f32[3], %s: f32[3], %gy: f32[2,3,4]) {
      %0:3 = batch_norm_grad(%x, %g, %m, %s, %gy) {axis=1} : (f32[2,3,4], f32[3], f32[3])
      %1 = cast(%0#0) {to=bf16} : bf16[2,3,4]
      %2 = exp(%0#0) : f32[2,3,4]
      %3:3 = batch_norm_grad(%x, %g, %m, %s, %2) {axis=1} : (f32[2,3,4], f32[3], f32[3])
      %4 = cast(%3#0) {to=f16} : f16[2,3,4]
      return %1, %4
    })");
  run_checked(narrow_norm_gradients, g, false);
}

}  // namespace
}  // namespace lt::passes
