#include "passes/sink_reshapes.h"

#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// A linear layer's [8,16] rows reshaped to [2,4,16], then gelu_erf, then back to [8,16]: the
// first run sinks the reshape below gelu_erf, where it meets the reshape back and both go, so
// the second run finds no reshape under an elementwise op.
TEST(SinkReshapes, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @f(%x: f32[8,32], %w: f32[16,32], %b: f32[16], %g: f32[2,4,16]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=true} : f32[8,16]
      %1 = add(%0, %b) : f32[8,16]
      %2 = reshape(%1) {shape=[2,4,16]} : f32[2,4,16]
      %3 = gelu_erf(%2) : f32[2,4,16]
      %4 = reshape(%3) {shape=[8,16]} : f32[8,16]
      %5 = cast(%4) {to=bf16} : bf16[8,16]
      %6 = gelu_erf_grad(%2) : f32[2,4,16]
      %7 = mul(%6, %g) : f32[2,4,16]
      return %5, %7
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(sink_reshapes, g, true);
  for (const ir::Node& n : g.nodes()) {
    if (n.op == ir::Op::GeluErf || n.op == ir::Op::GeluErfGrad) {
      EXPECT_EQ(n.types[0].shape, (Shape{8, 16})) << ir::print(g);
    }
  }
  EXPECT_EQ(count_ops(g, ir::Op::Reshape), 1);  // the product's, for its [2,4,16] reader
  EXPECT_EQ(result_types(g), types);
}

// Operands reshaped from two different shapes cannot run in either: kept.
TEST(SinkReshapes, KeepsReshapesOfDifferentShapes) {
  ir::Graph g = parse_ok(R"(
    graph @f(%y: f32[8,16], %z: f32[16,8]) {
      %0 = reshape(%y) {shape=[2,4,16]} : f32[2,4,16]
      %1 = reshape(%z) {shape=[2,4,16]} : f32[2,4,16]
      %2 = add(%0, %1) : f32[2,4,16]
      return %2
    })");
  run_checked(sink_reshapes, g, false);
}

}  // namespace
}  // namespace lt::passes
