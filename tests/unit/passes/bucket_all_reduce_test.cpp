#include "passes/bucket_all_reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pass_test_util.h"

namespace lt::passes {
namespace {

using testing::count_ops;
using testing::parse_ok;
using testing::result_types;
using testing::run_checked;

// A replica's step after its backward: the gradients of w2 (%0) and b2 (%1), computed first, and
// of w1 (%3), computed last.
constexpr const char* kReplicaStep = R"(
  graph @replica_step(%x: f32[16,16], %dy: f32[16,16], %w1: f32[16,16], %w2: f32[16,16], %b2: f32[16], %lr: f32[]) {
    %0 = matmul(%dy, %x) {transpose_a=true, transpose_b=false} : f32[16,16]
    %1 = sum(%dy) {axes=[0], keepdim=false} : f32[16]
    %2 = matmul(%dy, %w2) {transpose_a=false, transpose_b=false} : f32[16,16]
    %3 = matmul(%2, %x) {transpose_a=true, transpose_b=false} : f32[16,16]
    %4 = all_reduce(%0) {reduce=mean} : f32[16,16]
    %5 = all_reduce(%1) {reduce=mean} : f32[16]
    %6 = all_reduce(%3) {reduce=mean} : f32[16,16]
    %7 = mul(%4, %lr) : f32[16,16]
    %8 = sub(%w2, %7) : f32[16,16]
    %9 = mul(%5, %lr) : f32[16]
    %10 = sub(%b2, %9) : f32[16]
    %11 = mul(%6, %lr) : f32[16,16]
    %12 = sub(%w1, %11) : f32[16,16]
    return %8, %10, %12
  })";

/// The element counts of g's all_reduces, in graph order.
std::vector<int64_t> all_reduce_sizes(const ir::Graph& g) {
  std::vector<int64_t> out;
  for (const ir::Node& n : g.nodes())
    if (n.op == ir::Op::AllReduce) out.push_back(g.type(n.inputs[0]).numel());
  return out;
}

// 2 KiB buckets: w2's and b2's gradients (1088 bytes) share the first, w1's (1024) is alone. The
// second run finds one all_reduce per bucket, each already right after its operand; the two
// packed values would make 2112 bytes, more than a bucket holds, so they are not packed again.
TEST(BucketAllReduce, SecondRunOfItsBucketsChangesNothing) {
  ir::Graph g = parse_ok(kReplicaStep);
  const std::vector<std::string> types = result_types(g);
  const BucketOptions o{.first_bytes = 2048, .bytes = 2048};
  run_checked([&](ir::Graph& graph) { return bucket_all_reduce(graph, o); }, g, true);
  EXPECT_EQ(all_reduce_sizes(g), (std::vector<int64_t>{272, 256}));
  EXPECT_EQ(count_ops(g, ir::Op::Concat), 1);
  EXPECT_EQ(result_types(g), types);
}

// The default buckets hold all three gradients in one: the second run has a single all_reduce,
// a bucket of one already in place.
TEST(BucketAllReduce, SecondRunOfOneBucketChangesNothing) {
  ir::Graph g = parse_ok(kReplicaStep);
  run_checked([](ir::Graph& graph) { return bucket_all_reduce(graph, {}); }, g, true);
  EXPECT_EQ(all_reduce_sizes(g), (std::vector<int64_t>{528}));
  EXPECT_EQ(count_ops(g, ir::Op::Slice), 3);
}

// A first bucket smaller than the later ones: w2's gradient (1024 bytes) fills the first alone,
// b2's and w1's share the second. Run again, nothing fits beside the first bucket's 1024 bytes.
TEST(BucketAllReduce, SecondRunWithASmallFirstBucketChangesNothing) {
  ir::Graph g = parse_ok(kReplicaStep);
  const BucketOptions o{.first_bytes = 1024, .bytes = 4096};
  run_checked([&](ir::Graph& graph) { return bucket_all_reduce(graph, o); }, g, true);
  EXPECT_EQ(all_reduce_sizes(g), (std::vector<int64_t>{256, 272}));
}

// Values that cannot share a bucket (one read before the next is computed, one reducing
// another's all_reduce, a mean beside sums), and one traced before its bucket's last operand: the
// buckets the first run makes are the ones a second run would make.
TEST(BucketAllReduce, SecondRunKeepsBucketsThatCannotMerge) {
  ir::Graph g = parse_ok(R"(
    graph @order(%a: f32[4], %b: f32[4], %d: f32[2]) {
      %0 = exp(%a) : f32[4]
      %1 = all_reduce(%0) {reduce=sum} : f32[4]
      %2 = mul(%1, %b) : f32[4]
      %3 = exp(%2) : f32[4]
      %4 = all_reduce(%3) {reduce=sum} : f32[4]
      %5 = all_reduce(%4) {reduce=sum} : f32[4]
      %6 = all_reduce(%b) {reduce=mean} : f32[4]
      %7 = all_reduce(%a) {reduce=mean} : f32[4]
      %8 = all_reduce(%0) {reduce=max} : f32[4]
      %9 = neg(%d) : f32[2]
      %10 = all_reduce(%9) {reduce=max} : f32[2]
      return %5, %6, %7, %8, %10
    })");
  const std::vector<std::string> types = result_types(g);
  run_checked([](ir::Graph& graph) { return bucket_all_reduce(graph, {}); }, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::Concat), 2);  // the means of %b and %a, the maxima of %0, %9
  EXPECT_EQ(count_ops(g, ir::Op::AllReduce), 5);
  EXPECT_EQ(result_types(g), types);
}

// A bucket over parameters only goes before every node. The first run packs %b and %a (a
// concat, a node) and puts %c's all_reduce, a bucket of one, ahead of that pack: where a second
// run, which sees the mean bucket's operand computed by the concat, puts it too.
TEST(BucketAllReduce, SecondRunKeepsTheOrderOfBucketsOverParameters) {
  ir::Graph g = parse_ok(R"(
    graph @params(%a: f32[4], %b: f32[4], %c: f64[4]) {
      %0 = all_reduce(%b) {reduce=mean} : f32[4]
      %1 = all_reduce(%c) {reduce=sum} : f64[4]
      %2 = all_reduce(%a) {reduce=mean} : f32[4]
      return %0, %1, %2
    })");
  run_checked([](ir::Graph& graph) { return bucket_all_reduce(graph, {}); }, g, true);
  EXPECT_EQ(count_ops(g, ir::Op::AllReduce), 2);  // the means of %b and %a packed, %c's alone
  EXPECT_EQ(count_ops(g, ir::Op::Concat), 1);
}

TEST(BucketAllReduce, OffLeavesTheGraph) {
  ir::Graph g = parse_ok(kReplicaStep);
  run_checked([](ir::Graph& graph) { return bucket_all_reduce(graph, {.bytes = 0}); }, g, false);
  EXPECT_EQ(all_reduce_sizes(g), (std::vector<int64_t>{256, 16, 256}));
}

}  // namespace
}  // namespace lt::passes
