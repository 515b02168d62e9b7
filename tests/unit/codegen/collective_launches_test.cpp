// A compiled step's collectives run as start/done launch pairs: each bucket's all_reduce starts
// right after its last gradient and is waited for just before the first launch that reads it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/parser.h"
#include "passes/pass_log.h"
#include "runtime/executable.h"
#include "runtime/interpreter.h"

namespace lt::codegen {
namespace {

// The backward of two layers (w2's gradient %0 and b2's %1 first, then w1's %3) and the SGD
// update of each parameter by its all-reduced gradient.
constexpr const char* kStep = R"(
graph @replica_step(%x: f32[16,16], %dy: f32[16,16], %w1: f32[16,16], %w2: f32[16,16],
                    %b2: f32[16], %lr: f32[]) {
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

std::shared_ptr<rt::Executable> compile_step(int64_t bucket_bytes) {
  passes::LowerOptions o;
  o.buckets = {bucket_bytes, bucket_bytes};
  passes::PassLog log(passes::PassLogOptions{});
  const passes::LoweredGraph l = backends::cpu().lower(ir::parse(kStep), o, log);
  return backends::cpu().compile(l, {});
}

// Parameters of `g` holding values in [-0.6, 0.65], different for each parameter.
std::vector<rt::BufferPtr> step_params(const ir::Graph& g) {
  std::vector<rt::BufferPtr> params;
  for (size_t p = 0; p < g.params().size(); ++p) {
    const TensorType& t = g.params()[p].type;
    params.push_back(rt::Buffer::allocate(t.bytes()));
    auto* f = static_cast<float*>(params.back()->data());
    for (int64_t i = 0; i < t.numel(); ++i)
      f[i] = static_cast<float>((i * 7 + static_cast<int64_t>(p) * 3) % 11) / 8.0f - 0.6f;
  }
  return params;
}

// w1's gradient, two matmuls away, starts first (#2) and is in flight while the bucket of w2's
// and b2's gradients is computed, packed (#5) and started (#6), and during their updates; each
// done comes just before the first update that reads it (#7, #10).
TEST(CollectiveLaunches, StartAfterTheLastOperandDoneBeforeTheFirstReader) {
  const auto exe = compile_step(2048);
  EXPECT_EQ(rt::print_launches(*exe),
            "#0 library matmul (in: s1 s3; out: s6)\n"
            "#1 library matmul (in: s6 s0; out: s7)\n"
            "#2 start all_reduce (in: s7; out: s8)\n"
            "#3 library matmul (in: s1 s0; out: s9)\n"
            "#4 loop lt_kernel_4 (in: s1; out: s10)\n"
            "#5 loop lt_kernel_5 (in: s9 s10; out: s11)\n"
            "#6 start all_reduce (in: s11; out: s12)\n"
            "#7 done all_reduce of #6 (in: s12)\n"
            "#8 loop lt_kernel_7 (in: s12 s5 s3; out: s13)\n"
            "#9 loop lt_kernel_8 (in: s12 s5 s4; out: s14)\n"
            "#10 done all_reduce of #2 (in: s8)\n"
            "#11 loop lt_kernel_9 (in: s8 s5 s2; out: s15)\n");
}

// The trainers keep each parameter's gradient after the step: an all-reduce whose output is a
// result. Its operand, the gradient's GEMM, writes into that result's buffer, so the start
// copies nothing, and each run's gradient is a buffer of its own.
TEST(CollectiveLaunches, AKeptGradientIsComputedInItsResultsBuffer) {
  const ir::Graph g = ir::parse(R"(
graph @f(%x: f32[16,16], %dy: f32[16,16], %w: f32[16,16], %lr: f32[]) {
  %0 = matmul(%dy, %x) {transpose_a=true, transpose_b=false} : f32[16,16]
  %1 = all_reduce(%0) {reduce=mean} : f32[16,16]
  %2 = mul(%1, %lr) : f32[16,16]
  %3 = sub(%w, %2) : f32[16,16]
  return %3, %1
})");
  passes::PassLog log(passes::PassLogOptions{});
  const passes::LoweredGraph l = backends::cpu().lower(g, {}, log);
  const ir::BufferPlan& plan = *l.buffers;
  const ir::BufferSlot& grad = plan.slots[plan.slot_of(l.graph.results()[1])];
  const ir::Node& all_reduce = l.graph.node(l.graph.results()[1].def);
  ASSERT_EQ(all_reduce.op, ir::Op::AllReduce);
  EXPECT_EQ(plan.slots[plan.slot_of(all_reduce.inputs[0])].storage, ir::Storage::InResult)
      << ir::print_buffer_plan(l.graph, plan);
  EXPECT_EQ(grad.storage, ir::Storage::Result);
  const auto exe = backends::cpu().compile(l, {});
  const std::vector<rt::BufferPtr> params = step_params(g);
  const std::vector<rt::BufferPtr> want = rt::InterpretedGraph(g).run(params);
  const std::vector<rt::BufferPtr> first = exe->run(params), second = exe->run(params);
  EXPECT_NE(first[1], second[1]);
  for (const auto& got : {first, second})
    for (size_t r = 0; r < want.size(); ++r)
      for (int64_t i = 0; i < 256; ++i)
        ASSERT_NEAR(static_cast<const float*>(got[r]->data())[i],
                    static_cast<const float*>(want[r]->data())[i], 1e-5f)
            << "result " << r << " element " << i;
}

TEST(CollectiveLaunches, OneRankRunsTheStepAsTheInterpreterDoes) {
  const ir::Graph g = ir::parse(kStep);
  const std::vector<rt::BufferPtr> params = step_params(g);
  const std::vector<rt::BufferPtr> want = rt::InterpretedGraph(g).run(params);
  for (int64_t bucket : {int64_t{0}, int64_t{2048}, int64_t{1} << 20}) {
    const std::vector<rt::BufferPtr> got = compile_step(bucket)->run(params);
    ASSERT_EQ(got.size(), want.size());
    for (size_t r = 0; r < got.size(); ++r) {
      const auto n = static_cast<int64_t>(want[r]->bytes() / sizeof(float));
      const auto* a = static_cast<const float*>(got[r]->data());
      const auto* b = static_cast<const float*>(want[r]->data());
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(a[i], b[i], 1e-5f * (1 + std::abs(b[i])))
            << "bucket " << bucket << " result " << r << " element " << i;
    }
  }
}

}  // namespace
}  // namespace lt::codegen
