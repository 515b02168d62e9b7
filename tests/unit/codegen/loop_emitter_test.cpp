// The loop emitter on hand-made fusion groups: how it splits the work into rows (what the thread
// pool gets), that the loops it emits vectorize, and what they compute, called directly.
#include "codegen/loop_emitter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <vector>

#include "ir/parser.h"
#include "runtime/executable.h"
#include "tests/unit/codegen/test_modules.h"

namespace lt::codegen {
namespace {

using testing::TestModule;

// One loop group holding every node of the graph, over `iter`.
ir::FusionGroup whole_graph(const ir::Graph& g, Shape iter) {
  std::vector<ir::FusionGroup> groups(1);
  groups[0].kind = ir::KernelKind::Loop;
  groups[0].shape = std::move(iter);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) groups[0].nodes.push_back(id);
  const std::vector<int> kernel(g.nodes().size(), 0);
  ir::fill_group_io(g, kernel, groups);
  return groups[0];
}

struct Compiled {
  std::unique_ptr<Jit> jit;
  rt::LoopKernelFn fn = nullptr;
  LoopShape shape;
  std::string optimized_ir;
};

Compiled compile_group(const ir::Graph& g, const ir::FusionGroup& grp,
                       std::span<const int> written_over = {}) {
  Compiled c;
  c.jit = Jit::create();
  TestModule tm(*c.jit);
  c.shape = emit_loop_kernel(*tm.m, g, grp, "kernel", written_over);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("lt_loop_emitter_" + std::to_string(::getpid()));
  JitOptions o;
  o.dump_dir = dir.string();
  o.dump_prefix = "k";
  tm.add_to(*c.jit, o);
  c.fn = reinterpret_cast<rt::LoopKernelFn>(c.jit->lookup("kernel"));
  std::ifstream in(dir / "k.opt.ll");
  std::stringstream ss;
  ss << in.rdbuf();
  c.optimized_ir = ss.str();
  std::filesystem::remove_all(dir);
  return c;
}

// Runs all rows in chunks of `chunk` rows, as the thread pool would split them.
void run_rows(const Compiled& c, std::vector<void*> buffers, int64_t chunk) {
  for (int64_t r = 0; r < c.shape.rows; r += chunk)
    c.fn(buffers.data(), r, std::min(c.shape.rows, r + chunk));
}

std::vector<float> iota_data(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale);
  return v;
}

TEST(LoopEmitter, ElementwiseRowsCollapseWhereEveryInputAllows) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[4,8,16], %y: f32[4,8,16], %b: f32[16]) {
      %0 = add(%x, %y) : f32[4,8,16]
      %1 = mul(%0, %b) : f32[4,8,16]
      return %1
    })");
  const Compiled c = compile_group(g, whole_graph(g, {4, 8, 16}));
  EXPECT_EQ(c.shape.rows, 32);  // %b breaks the run at the innermost dim
  EXPECT_EQ(c.shape.inner, 16);
  // Vector code of the CPU's width: a vector loop, or (16 floats being two AVX2 vectors) the
  // straight-line vector code LLVM's unroller and SLP vectorizer make of it.
  EXPECT_NE(c.optimized_ir.find(" x float>"), std::string::npos) << "not vectorized";
}

// A channels-last activation with 16 channels, normalized with per-channel operands (a batch
// norm's input gradient written in ops): LLVM unrolls the 16-channel loop fully, and if the row
// loop around it were free to vectorize it would become 16-lane gathers and scatters with a
// 64-byte stride (5.1 ms against 1.2 for [128,32,32,16]). The row loop stays scalar, so the
// unrolled channels are contiguous vectors.
TEST(LoopEmitter, ShortChannelLoopIsVectorizedAlongTheChannels) {
  const ir::Graph g = ir::parse(R"(graph @f(%gy: f32[8,4,4,16], %x: f32[8,4,4,16], %m: f32[16],
                                           %k: f32[16]) {
      %0 = sub(%x, %m) : f32[8,4,4,16]
      %1 = mul(%0, %k) : f32[8,4,4,16]
      %2 = sub(%gy, %1) : f32[8,4,4,16]
      return %2
    })");
  const Compiled c = compile_group(g, whole_graph(g, {8, 4, 4, 16}));
  EXPECT_EQ(c.shape.rows, 128);
  EXPECT_EQ(c.shape.inner, 16);
  EXPECT_NE(c.optimized_ir.find(" x float>"), std::string::npos) << "not vectorized";
  EXPECT_EQ(c.optimized_ir.find("gather"), std::string::npos);
  EXPECT_EQ(c.optimized_ir.find("scatter"), std::string::npos);
  std::vector<float> gy = iota_data(2048, 0.3f), x = iota_data(2048, 0.7f), out(2048, NAN);
  std::vector<float> m = iota_data(16, 1.1f), k = iota_data(16, 1.9f);
  run_rows(c, {x.data(), m.data(), k.data(), gy.data(), out.data()}, 5);  // first-use order
  for (int i = 0; i < 2048; ++i) {  // within rounding: either side may contract to an fma
    const float want = gy[i] - (x[i] - m[i % 16]) * k[i % 16];
    ASSERT_NEAR(out[i], want, 1e-6f * (1 + std::abs(want))) << i;
  }
}

// A long collapsed run (a whole weight matrix's optimizer update is one row) is cut into blocks
// of 16384 elements, so the thread pool can split it; the last block is short.
TEST(LoopEmitter, LongElementwiseRunIsCutIntoBlocks) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[5,20000], %y: f32[5,20000], %s: f32[]) {
      %0 = mul(%x, %s) : f32[5,20000]
      %1 = sub(%y, %0) : f32[5,20000]
      return %1
    })");
  const Compiled c = compile_group(g, whole_graph(g, {5, 20000}));
  EXPECT_EQ(c.shape.rows, 7);  // 100000 elements in blocks of 16384
  EXPECT_EQ(c.shape.inner, 16384);
  EXPECT_NE(c.optimized_ir.find("vector.body"), std::string::npos);
  std::vector<float> x = iota_data(100000, 0.01f), y = iota_data(100000, 0.03f), out(100000, NAN);
  float s = 0.5f;
  run_rows(c, {x.data(), &s, y.data(), out.data()}, 2);  // inputs in first-use order
  for (int i = 0; i < 100000; ++i) ASSERT_EQ(out[i], y[i] - x[i] * s) << i;
}

// An optimizer update writes its results over the buffers it reads (donated parameters). Stored
// through the inputs' pointers, the loop vectorizes with no run-time overlap check: such a check
// fails on an exact overlap and runs the scalar loop instead. Run in place, it computes the
// update.
TEST(LoopEmitter, OutputsWrittenOverInputsVectorizeWithoutOverlapChecks) {
  const ir::Graph g = ir::parse(R"(graph @f(%m: f32[3,1000], %b: f32[], %g: f32[3,1000],
                                           %lr: f32[], %w: f32[3,1000]) {
      %0 = mul(%m, %b) : f32[3,1000]
      %1 = add(%0, %g) : f32[3,1000]
      %2 = mul(%1, %lr) : f32[3,1000]
      %3 = sub(%w, %2) : f32[3,1000]
      return %1, %3
    })");
  const ir::FusionGroup grp = whole_graph(g, {3, 1000});
  ASSERT_EQ(grp.inputs.size(), 5u);  // m, b, g, lr, w: first-use order
  const int written_over[] = {0, 4};  // %1 over m, %3 over w
  const Compiled c = compile_group(g, grp, written_over);
  EXPECT_NE(c.optimized_ir.find("vector.body"), std::string::npos) << "not vectorized";
  EXPECT_EQ(c.optimized_ir.find("found.conflict"), std::string::npos) << "overlap check emitted";
  std::vector<float> m = iota_data(3000, 0.01f), gr = iota_data(3000, 0.07f),
                     w = iota_data(3000, 0.13f);
  float b = 0.9f, lr = 0.05f;
  std::vector<float> want_m(3000), want_w(3000);
  for (int i = 0; i < 3000; ++i) {
    want_m[i] = m[i] * b + gr[i];
    want_w[i] = w[i] - want_m[i] * lr;
  }
  run_rows(c, {m.data(), &b, gr.data(), &lr, w.data(), m.data(), w.data()}, 1);
  for (int i = 0; i < 3000; ++i) {  // within rounding: either side may contract to an fma
    ASSERT_NEAR(m[i], want_m[i], 1e-6f * (1 + std::abs(want_m[i]))) << i;
    ASSERT_NEAR(w[i], want_w[i], 1e-6f * (1 + std::abs(want_w[i]))) << i;
  }
}

// Sums along the innermost dim: one row per kept index, vector partial sums along it.
TEST(LoopEmitter, InnerReductionRowsAndVectorAccumulators) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[37,301]) {
      %0 = exp(%x) : f32[37,301]
      %1 = sum(%0) {axes=[1], keepdim=false} : f32[37]
      return %1
    })");
  const Compiled c = compile_group(g, whole_graph(g, {37, 301}));
  EXPECT_EQ(c.shape.rows, 37);
  EXPECT_EQ(c.shape.inner, 301);
  EXPECT_NE(c.optimized_ir.find("x float>"), std::string::npos) << "the sum was not vectorized";
  std::vector<float> x = iota_data(37 * 301, 0.01f), out(37);
  run_rows(c, {x.data(), out.data()}, 5);
  for (int r = 0; r < 37; ++r) {
    double want = 0;
    for (int k = 0; k < 301; ++k) want += std::exp(static_cast<double>(x[r * 301 + k]));
    EXPECT_NEAR(out[r], want, 1e-5 * want) << r;
  }
}

// f32 exp is emitted inline (scalar_emitter.cpp's emit_expf) so that it vectorizes at the full
// width with no calls: against e^x in double, within 1 ulp where the result is normal and one
// step of 2^-149 where it is subnormal; 0, inf and NaN where they belong.
TEST(LoopEmitter, InlineExpf) {
  constexpr int64_t n = 1 << 20;
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[1048576]) {
      %0 = exp(%x) : f32[1048576]
      return %0
    })");
  const Compiled c = compile_group(g, whole_graph(g, {n}));
  EXPECT_EQ(c.optimized_ir.find("expf"), std::string::npos) << "exp is a library call";
  EXPECT_NE(c.optimized_ir.find("x float>"), std::string::npos) << "not vectorized";
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                            88.72283f, 88.72284f, 89.5f, -87.33654f, -103.97f, -103.98f, -104.5f,
                            1e-30f, -1e-30f, 1e-45f};
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -110.0f + 200.0f * static_cast<float>(i) / n;
  for (size_t i = 0; i < std::size(specials); ++i) x[i] = specials[i];
  run_rows(c, {x.data(), y.data()}, 1);
  const double tiny = std::ldexp(1.0, -149);
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    } else if (want > std::numeric_limits<float>::max()) {
      ASSERT_EQ(y[i], inf) << x[i];
    } else if (want < std::numeric_limits<float>::min()) {
      ASSERT_LE(std::fabs(y[i] - want), tiny) << x[i];
    } else {
      const float w = static_cast<float>(want);
      const double ulp = std::nextafter(w, inf) - w;
      ASSERT_LE(std::fabs(y[i] - want), ulp) << x[i];
    }
  }
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[3], 0.0f);
}

// A bias gradient: rows are blocks of columns; each accumulates the batch into its block (the
// last block is short).
TEST(LoopEmitter, OuterReductionAccumulatesBlocksOfColumns) {
  const ir::Graph g = ir::parse(R"(graph @f(%g: f32[128,2560]) {
      %0 = sum(%g) {axes=[0], keepdim=true} : f32[1,2560]
      %1 = reshape(%0) {shape=[2560]} : f32[2560]
      return %1
    })");
  const Compiled c = compile_group(g, whole_graph(g, {128, 2560}));
  EXPECT_EQ(c.shape.rows, 3);  // 1024 columns per block (4 KB runs per row, see loop_nest.cpp)
  EXPECT_EQ(c.shape.inner, 128 * 1024);
  EXPECT_NE(c.optimized_ir.find(" x float>"), std::string::npos) << "not vectorized";
  std::vector<float> x = iota_data(128 * 2560, 0.37f), out(2560, -1);
  run_rows(c, {x.data(), out.data()}, 1);
  for (int j = 0; j < 2560; ++j) {
    float want = 0;  // same order as the kernel: down the batch
    for (int r = 0; r < 128; ++r) want += x[r * 2560 + j];
    EXPECT_EQ(out[j], want) << j;
  }
}

// max over the middle axis of [6,50,40]: the outer kept dim and the block of the inner one make
// the rows; NaN propagates as in the eager kernel; the mean scales by 1/50 as it does.
TEST(LoopEmitter, MiddleAxisMaxAndMean) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[6,50,40]) {
      %0 = max(%x) {axes=[1], keepdim=false} : f32[6,40]
      %1 = mean(%x) {axes=[1], keepdim=true} : f32[6,1,40]
      return %0, %1
    })");
  const Compiled c = compile_group(g, whole_graph(g, {6, 50, 40}));
  EXPECT_EQ(c.shape.rows, 6);
  std::vector<float> x = iota_data(6 * 50 * 40, 0.7f), mx(240), mean(240);
  x[3 * 2000 + 7 * 40 + 5] = std::numeric_limits<float>::quiet_NaN();
  run_rows(c, {x.data(), mx.data(), mean.data()}, 2);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 40; ++j) {
      float m = std::numeric_limits<float>::lowest(), s = 0;
      for (int k = 0; k < 50; ++k) {
        const float v = x[i * 2000 + k * 40 + j];
        m = (v > m || v != v) ? v : m;
        s += v;
      }
      if (i == 3 && j == 5) {
        EXPECT_TRUE(std::isnan(mx[i * 40 + j]));
        EXPECT_TRUE(std::isnan(mean[i * 40 + j]));
      } else {
        EXPECT_EQ(mx[i * 40 + j], m);
        EXPECT_EQ(mean[i * 40 + j], s * (1.0f / 50));
      }
    }
}

// Views fold into the addresses: a transpose read with its strides, and a pad that reads its
// value outside the source (and never an address outside the buffer).
TEST(LoopEmitter, FoldedTransposeAndPad) {
  const ir::Graph g = ir::parse(R"(graph @f(%x: f32[5,3], %y: f32[3,5]) {
      %0 = permute(%x) {perm=[1,0]} : f32[3,5]
      %1 = pad(%y) {lo=[1,0], hi=[0,2], value=-4} : f32[4,7]
      %2 = slice(%1) {start=[0,0], stop=[3,5], step=[1,1]} : f32[3,5]
      %3 = add(%0, %2) : f32[3,5]
      return %3
    })");
  const Compiled c = compile_group(g, whole_graph(g, {3, 5}));
  std::vector<float> x = iota_data(15, 1.3f), y = iota_data(15, 0.9f), out(15);
  run_rows(c, {x.data(), y.data(), out.data()}, 1);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      const float padded = i == 0 ? -4.0f : y[(i - 1) * 5 + j];
      EXPECT_EQ(out[i * 5 + j], x[j * 3 + i] + padded) << i << "," << j;
    }
}

}  // namespace
}  // namespace lt::codegen
