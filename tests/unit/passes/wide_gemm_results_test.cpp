#include "passes/wide_gemm_results.h"

#include <gtest/gtest.h>

#include <variant>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// A bf16 matmul read by one cast to f32 and a convolution read by two: after the first run both
// write f32 (f32_out) and the casts are gone; the second run finds no bf16 GEMM result that is
// widened again.
TEST(WideGemmResults, SecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @f(%a: bf16[4,8], %b: bf16[8,5], %x: bf16[2,3,6,6], %w: bf16[4,3,3,3]) {
      %0 = matmul(%a, %b) {transpose_a=false, transpose_b=false} : bf16[4,5]
      %1 = cast(%0) {to=f32} : f32[4,5]
      %2 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : bf16[2,4,6,6]
      %3 = cast(%2) {to=f32} : f32[2,4,6,6]
      %4 = cast(%2) {to=f32} : f32[2,4,6,6]
      %5 = mul(%3, %4) : f32[2,4,6,6]
      %6 = exp(%1) : f32[4,5]
      return %6, %5
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(wide_gemm_results, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::Cast), 0);
  for (const ir::Node& n : g.nodes()) {
    if (const auto* m = std::get_if<ir::MatMulAttrs>(&n.attrs)) {
      EXPECT_TRUE(m->f32_out);
    }
    if (const auto* c = std::get_if<ir::ConvAttrs>(&n.attrs)) {
      EXPECT_TRUE(c->f32_out);
    }
  }
  EXPECT_EQ(result_types(g), types);
}

// Kept rounded: a bf16 result the graph returns, and an f16 one (a loss scaler watches its
// overflow).
TEST(WideGemmResults, KeepsResultsAndF16Rounded) {
  ir::Graph g = parse_ok(R"(
    graph @f(%a: bf16[4,8], %h: f16[4,8], %k: f16[8,5]) {
      %0 = matmul(%a, %a) {transpose_a=false, transpose_b=true} : bf16[4,4]
      %1 = matmul(%h, %k) {transpose_a=false, transpose_b=false} : f16[4,5]
      %2 = cast(%1) {to=f32} : f32[4,5]
      return %0, %2
    })");
  run_checked(wide_gemm_results, g, false);
}

}  // namespace
}  // namespace lt::passes
