#include "passes/absorb_widening_casts.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// A batch norm and its gradient read the bf16 convolution result through a cast to f32; after
// the first run they read it directly and the cast has no reader left (dce's to drop), so the
// second run finds no cast under a batch norm.
TEST(AbsorbWideningCasts, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: bf16[2,3,4], %g: f32[3], %b: f32[3], %m: f32[3], %v: f32[3], %gy: f32[2,3,4]) {
      %0 = cast(%x) {to=f32} : f32[2,3,4]
      %1:5 = batch_norm(%0, %g, %b, %m, %v) {eps=1e-05, momentum=0.1, axis=1} : (f32[2,3,4], f32[3], f32[3], f32[3], f32[3])
      %2:3 = batch_norm_grad(%0, %g, %1#1, %1#2, %gy) {axis=1} : (f32[2,3,4], f32[3], f32[3])
      return %1#0, %2#0
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(absorb_widening_casts, g, true);
  for (const ir::Node& n : g.nodes()) {
    if (n.op == ir::Op::BatchNorm || n.op == ir::Op::BatchNormGrad) {
      EXPECT_EQ(n.inputs[0], ir::Value::param(0)) << ir::print(g);
    }
  }
  EXPECT_EQ(count_ops(g, ir::Op::Cast), 1);  // left for dce
  EXPECT_EQ(result_types(g), types);
}

// A layer norm (its row says Float, not FloatWidensFirst) and a batch norm in f64 keep their
// casts.
TEST(AbsorbWideningCasts, KeepsCastsOtherOpsNeed) {
  ir::Graph g = parse_ok(R"(
    graph @f(%h: f16[2,3], %g: f32[3], %b: f32[3], %d: f64[3]) {
      %0 = cast(%h) {to=f32} : f32[2,3]
      %1:3 = layer_norm(%0, %g, %b) {eps=1e-05} : (f32[2,3], f32[2], f32[2])
      %2 = cast(%h) {to=f64} : f64[2,3]
      %3:5 = batch_norm(%2, %d, %d, %d, %d) {eps=1e-05, momentum=0.1, axis=1} : (f64[2,3], f64[3], f64[3], f64[3], f64[3])
      return %1#0, %3#0
    })");
  run_checked(absorb_widening_casts, g, false);
}

}  // namespace
}  // namespace lt::passes
