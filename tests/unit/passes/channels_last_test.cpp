#include "passes/channels_last.h"

#include <gtest/gtest.h>

#include <variant>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

/// How many convolutions (forward or gradient) run channels-last.
int channels_last_convs(const ir::Graph& g) {
  int n = 0;
  for (const ir::Node& node : g.nodes())
    if (const auto* a = std::get_if<ir::ConvAttrs>(&node.attrs)) n += a->channels_last;
  return n;
}

// A convolution, batch norm, residual add and relu, a strided convolution and a pooled head.
// The second run sees convolutions that already say channels_last and a permute reading a
// parameter: nothing is left to convert, and no second permute goes in.
TEST(ChannelsLast, ConvBlockSecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @block(%x: f32[2,16,8,8], %w1: f32[16,16,3,3], %w2: f32[32,16,3,3], %g: f32[16], %b: f32[16], %rm: f32[16], %rv: f32[16]) {
      %0 = conv2d(%x, %w1) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[2,16,8,8]
      %1:5 = batch_norm(%0, %g, %b, %rm, %rv) {eps=1e-05, momentum=0.1, axis=1} : (f32[2,16,8,8], f32[16], f32[16], f32[16], f32[16])
      %2 = add(%1#0, %x) : f32[2,16,8,8]
      %3 = relu(%2) : f32[2,16,8,8]
      %4 = conv2d(%3, %w2) {stride=[2,2], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[2,32,4,4]
      %5 = mean(%4) {axes=[2,3], keepdim=true} : f32[2,32,1,1]
      %6 = reshape(%5) {shape=[2,32]} : f32[2,32]
      return %6, %1#3, %1#4
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(channels_last, g, true);
  EXPECT_EQ(channels_last_convs(g), 2);
  EXPECT_EQ(count_ops(g, ir::Op::Permute), 1);  // into channels-last once, at the input
  EXPECT_EQ(result_types(g), types);
}

// The backward of a convolution and batch norm: after the first run both gradients of the
// convolution run channels-last and the input gradient is permuted back for the result; the
// second run leaves that permute, which only a result reads, where it is.
TEST(ChannelsLast, BackwardSecondRunChangesNothing) {
  ir::Graph g = parse_ok(R"(
    graph @backward(%in: f32[2,16,8,8], %w: f32[16,16,3,3], %g: f32[16], %mean: f32[16], %invstd: f32[16], %y: f32[2,16,8,8], %gy: f32[2,16,8,8]) {
      %0 = conv2d(%in, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[2,16,8,8]
      %1 = full() {shape=[], dtype=f32, value=0} : f32[]
      %2 = gt(%y, %1) : bool[2,16,8,8]
      %3 = where(%2, %gy, %1) : f32[2,16,8,8]
      %4:3 = batch_norm_grad(%0, %g, %mean, %invstd, %3) {axis=1} : (f32[2,16,8,8], f32[16], f32[16])
      %5 = conv2d_input_grad(%4#0, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[2,16,8,8], channels_last=false} : f32[2,16,8,8]
      %6 = conv2d_weight_grad(%in, %4#0) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[16,16,3,3], channels_last=false} : f32[16,16,3,3]
      return %5, %6, %4#1, %4#2
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked(channels_last, g, true);
  EXPECT_EQ(channels_last_convs(g), 3);
  EXPECT_EQ(count_ops(g, ir::Op::Permute), 3);  // %in and %gy in, the input gradient out
  EXPECT_EQ(result_types(g), types);
}

// Nothing to convert: 3 input channels (im2col on NCHW) and f64 keep their layout.
TEST(ChannelsLast, KeepsConvolutionsItWouldOnlyPermuteFor) {
  ir::Graph g = parse_ok(R"(
    graph @stays(%x: f32[2,3,8,8], %w: f32[16,3,3,3], %d: f64[2,16,8,8], %wd: f64[16,16,3,3]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[2,16,8,8]
      %1 = conv2d(%d, %wd) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f64[2,16,8,8]
      return %0, %1
    })");
  run_checked(channels_last, g, false);
  EXPECT_EQ(channels_last_convs(g), 0);
}

}  // namespace
}  // namespace lt::passes
