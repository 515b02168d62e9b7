// bf16 and f16 in compiled loop kernels: loaded, moved through views and stored as they are,
// converted by casts. The compiled step must give the eager kernels' (Eigen's) bits exactly:
// rounding to nearest even, ties, overflow to infinity, subnormals, signed zeros and NaN.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/fusion_plan.h"
#include "ir/parser.h"
#include "passes/pass_log.h"
#include "runtime/executable.h"
#include "runtime/interpreter.h"

namespace lt::codegen {
namespace {

constexpr const char* kCasts = R"(
graph @casts(%x: f32[4,8], %h: bf16[8,4], %d: f64[4,8], %i: i32[4,8]) {
  %0 = cast(%x) {to=bf16} : bf16[4,8]
  %1 = cast(%0) {to=f32} : f32[4,8]
  %2 = permute(%h) {perm=[1,0]} : bf16[4,8]
  %3 = cast(%2) {to=f32} : f32[4,8]
  %4 = add(%1, %3) : f32[4,8]
  %5 = cast(%d) {to=bf16} : bf16[4,8]
  %6 = cast(%i) {to=bf16} : bf16[4,8]
  %7 = cast(%h) {to=i32} : i32[8,4]
  %8 = cast(%h) {to=bool} : bool[8,4]
  return %4, %0, %5, %6, %7, %8
})";

// f32 values that exercise every branch of the rounding, as bit patterns.
std::vector<uint32_t> f32_cases() {
  return {0x3f800000, 0x3f808000, 0x3f818000, 0x3f808001, 0x3f807fff,  // 1, ties, near ties
          0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000,              // max (to inf), infs
          0x7fc00000, 0xffc00001, 0x7f800001,                          // NaNs
          0x00000001, 0x80000001, 0x007fffff, 0x00800000,              // subnormals, min normal
          0x00000000, 0x80000000, 0x40490fdb, 0xc0490fdb,              // zeros, +-pi
          0x3dcccccd, 0x447a0000, 0xc47a0000, 0x4b7fffff,              // 0.1, +-1000, 2^24-1
          0x3effffff, 0x3f000000, 0x3f000001, 0x42f6e979,
          0x33800000, 0xb3800000, 0x3f7fffff, 0x7e000000};
}

rt::BufferPtr buffer_of(const TensorType& t, const void* data) {
  rt::BufferPtr b = rt::Buffer::allocate(t.bytes());
  std::memcpy(b->data(), data, t.bytes());
  return b;
}

/// Runs `text` (params: f32, a 16-bit float, f64, i32, each of 32 elements) compiled and
/// interpreted, and compares every result byte for byte; `h` holds the 16-bit params' bits.
void expect_compiled_equals_interpreted(const std::string& text, const std::vector<uint32_t>& f,
                                        const std::vector<uint16_t>& h) {
  const ir::Graph g = ir::parse(text);
  std::vector<double> d;
  for (uint32_t v : f) d.push_back(static_cast<double>(std::bit_cast<float>(v)) * (1 + 1e-9));
  std::vector<int32_t> i;
  for (int k = 0; k < 32; ++k) i.push_back((k - 16) * 37 * (k % 3 == 0 ? 100003 : 1));
  const std::vector<rt::BufferPtr> params = {buffer_of(g.params()[0].type, f.data()),
                                             buffer_of(g.params()[1].type, h.data()),
                                             buffer_of(g.params()[2].type, d.data()),
                                             buffer_of(g.params()[3].type, i.data())};
  const std::vector<rt::BufferPtr> want = rt::InterpretedGraph(g).run(params);

  passes::PassLog log(passes::PassLogOptions{});
  const passes::LoweredGraph l = backends::cpu().lower(g, {}, log);
  const auto exe = backends::cpu().compile(l, {});
  const std::string launches = rt::print_launches(*exe);
  EXPECT_EQ(launches.find("library"), std::string::npos) << "every cast in a loop:\n"
                                                          << launches;
  const std::vector<rt::BufferPtr> got = exe->run(params);
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r]->bytes(), want[r]->bytes());
    const auto* a = static_cast<const unsigned char*>(got[r]->data());
    const auto* b = static_cast<const unsigned char*>(want[r]->data());
    for (size_t k = 0; k < want[r]->bytes(); ++k)
      ASSERT_EQ(a[k], b[k]) << "result " << r << " byte " << k;
  }
}

TEST(Bf16Loops, CompiledCastsGiveTheEagerKernelsBits) {
  const std::vector<uint32_t> f = f32_cases();
  std::vector<uint16_t> h;
  for (uint32_t v : f) h.push_back(static_cast<uint16_t>(v >> 16));  // bf16 of every kind
  expect_compiled_equals_interpreted(kCasts, f, h);
}

// f16: the same graph on f16 values of every kind (normal, subnormal, ties on the way down from
// f32, overflow past 65504, infinities, NaN).
TEST(F16Loops, CompiledCastsGiveTheEagerKernelsBits) {
  std::string text = kCasts;
  for (size_t at; (at = text.find("bf16")) != std::string::npos;) text.replace(at, 4, "f16");
  std::vector<uint32_t> f = f32_cases();
  // Around f16's range: 65504 (max), 65520 (the tie that rounds to infinity), 2^-24 (the least
  // subnormal) and a tie below it, and ties between two f16 values.
  f.resize(24);
  for (uint32_t v : {0x477fe000u, 0x477ff000u, 0x477fefffu, 0x33800000u, 0x33000000u, 0x33000001u,
                     0x3f801000u, 0x3f803000u})
    f.push_back(v);
  const std::vector<uint16_t> h = {0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfe01,
                                   0x0001, 0x8001, 0x03ff, 0x0400, 0x0000, 0x8000, 0x4248, 0xc248,
                                   0x2e66, 0x63d0, 0xe3d0, 0x3555, 0x3bff, 0x3800, 0x3801, 0x57d0,
                                   0x1000, 0x9000, 0x7d00, 0x0200, 0x4000, 0xc000, 0x5640, 0x2000};
  expect_compiled_equals_interpreted(text, f, h);
}

// Autocast's convolution and matmul on bf16 and f16 operands, their results cast back to f32 in
// the epilogue (with the bias and relu). The convolution's epilogue takes image blocks of the
// narrow output, which is never written whole.
constexpr const char* kImageBlocks = R"(
graph @autocast_block(%x: f32[4,3,6,6], %w: f32[8,3,3,3], %b: f32[8], %h: f32[5,16], %v: f32[7,16]) {
  %0 = cast(%x) {to=LOW} : LOW[4,3,6,6]
  %1 = cast(%w) {to=LOW} : LOW[8,3,3,3]
  %2 = conv2d(%0, %1) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : LOW[4,8,6,6]
  %3 = cast(%2) {to=f32} : f32[4,8,6,6]
  %4 = reshape(%b) {shape=[1,8,1,1]} : f32[1,8,1,1]
  %5 = expand(%4) {shape=[4,8,6,6]} : f32[4,8,6,6]
  %6 = add(%3, %5) : f32[4,8,6,6]
  %7 = relu(%6) : f32[4,8,6,6]
  %8 = cast(%h) {to=LOW} : LOW[5,16]
  %9 = cast(%v) {to=LOW} : LOW[7,16]
  %10 = matmul(%8, %9) {transpose_a=false, transpose_b=true} : LOW[5,7]
  %11 = cast(%10) {to=f32} : f32[5,7]
  return %7, %11
})";

/// Compiles `text` with LOW replaced by `low` and checks its plan has the epilogues `kernels`
/// and its results are the interpreter's bits: of the graph as written (wide < 0: the
/// wide_gemm_results stage off), or of the lowered graph, in which `wide` GEMMs write f32.
void expect_epilogues_match(std::string text, const char* low,
                            std::initializer_list<const char*> kernels, int wide = -1) {
  SCOPED_TRACE(low);
  for (size_t at; (at = text.find("LOW")) != std::string::npos;) text.replace(at, 3, low);
  const ir::Graph g = ir::parse(text);
  std::vector<rt::BufferPtr> params;
  uint32_t state = 12345;
  for (const ir::Param& p : g.params()) {
    std::vector<float> v(p.type.numel());
    for (float& x : v) {
      state = state * 1664525u + 1013904223u;
      x = static_cast<float>(static_cast<int32_t>(state >> 8) % 2001 - 1000) / 700.0f;
    }
    params.push_back(buffer_of(p.type, v.data()));
  }
  passes::PassLog log(passes::PassLogOptions{});
  passes::LowerOptions options;
  options.wide_gemm_results = wide >= 0;
  const passes::LoweredGraph l = backends::cpu().lower(g, options, log);
  const std::string lowered = ir::print(l.graph);
  int f32_out = 0;
  for (size_t at = 0; (at = lowered.find("f32_out=true", at)) != std::string::npos; ++at) ++f32_out;
  EXPECT_EQ(f32_out, std::max(wide, 0)) << lowered;
  const std::vector<rt::BufferPtr> want = rt::InterpretedGraph(l.graph).run(params);
  if (wide > 0) {  // the lowered graph's results are not the written graph's: no roundings
    const std::vector<rt::BufferPtr> rounded = rt::InterpretedGraph(g).run(params);
    for (size_t r = 0; r < rounded.size(); ++r)
      EXPECT_NE(std::memcmp(rounded[r]->data(), want[r]->data(), want[r]->bytes()), 0) << r;
  }
  const std::string plan = ir::print_fusion_plan(l.graph, *l.fusion);
  for (const char* k : kernels) EXPECT_NE(plan.find(k), std::string::npos) << plan;
  const auto exe = backends::cpu().compile(l, {});
  const std::vector<rt::BufferPtr> got = exe->run(params);
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) {
    ASSERT_EQ(got[r]->bytes(), want[r]->bytes());
    EXPECT_EQ(std::memcmp(got[r]->data(), want[r]->data(), want[r]->bytes()), 0)
        << "result " << r;
  }
}

// A convolution whose epilogue takes the whole output as one block (one pixel per image: the
// loop cannot split by image).
constexpr const char* kWholeOutputConv = R"(
graph @pixel_conv(%x: f32[4,3,3,3], %w: f32[1,3,3,3], %b: f32[1]) {
  %0 = cast(%x) {to=LOW} : LOW[4,3,3,3]
  %1 = cast(%w) {to=LOW} : LOW[1,3,3,3]
  %2 = conv2d(%0, %1) {stride=[1,1], padding=[0,0], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : LOW[4,1,1,1]
  %3 = cast(%2) {to=f32} : f32[4,1,1,1]
  %4 = reshape(%b) {shape=[1,1,1,1]} : f32[1,1,1,1]
  %5 = expand(%4) {shape=[4,1,1,1]} : f32[4,1,1,1]
  %6 = add(%3, %5) : f32[4,1,1,1]
  return %6
})";

TEST(LowPrecisionEpilogues, CastBackInTheEpilogueGivesTheInterpretersBits) {
  for (const char* low : {"bf16", "f16"}) {
    expect_epilogues_match(kImageBlocks, low, {" conv2d+loop ", " matmul+loop "});
    expect_epilogues_match(kWholeOutputConv, low, {" conv2d+loop "});
  }
}

// With wide_gemm_results the bf16 convolution and matmul write their f32 accumulators: the
// convolution's epilogue takes f32 image blocks, the matmul needs no epilogue at all, and the
// results are the lowered graph's (f32_out) bits. f16 keeps its roundings.
TEST(LowPrecisionEpilogues, WideBf16ResultsGiveTheLoweredGraphsBits) {
  expect_epilogues_match(kImageBlocks, "bf16", {" conv2d+loop f32", " library matmul"}, 2);
  expect_epilogues_match(kWholeOutputConv, "bf16", {" conv2d+loop f32"}, 1);
  expect_epilogues_match(kImageBlocks, "f16", {" conv2d+loop ", " matmul+loop "}, 0);
}

}  // namespace
}  // namespace lt::codegen
