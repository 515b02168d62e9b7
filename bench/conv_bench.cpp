// conv2d, its input gradient and its weight gradient at the shapes of the trainers' steps, on both
// paths (conv_paths.h): im2col around rt::gemm, and oneDNN's direct convolutions. Arguments:
// shape, pass (0 forward, 1 input gradient, 2 weight gradient), path (0 im2col, 1 oneDNN, 2 the
// direct one-channel kernel on channels-last activations, for the shapes of one input channel and
// the passes it runs), threads (lt::rt::set_num_threads). The figures are in docs/RESULTS.md,
// the command in docs/BENCHMARKS.md.
//   With --bf16, operands and results are bf16 (autocast's convolutions): path 0 is then the
//   fallback of CPUs without bf16 kernels (operands widened to f32, the f32 entry point, the
//   result rounded), path 1 oneDNN's bf16 kernels (skipped where the CPU has no bf16
//   instructions).
//   GFLOP/s = 2 N O (C / groups) KH KW OH OW / time. Operands are preallocated and touched; the
//   output is overwritten. With --epilogue, the forward hands each image to an OutputBlocks
//   consumer that reads it (as lazy mode's fused epilogues do).
#include <benchmark/benchmark.h>

#include <bit>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/type_rules.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"
#include "tools/cli.h"

namespace {

struct StepConv {
  const char* name;
  int64_t n, c, hw, o, k, stride;
};

// fmnist_cnn (batch 64, 28x28) and ResNet-20 (batch 32, 1x32x32) as bench/step_bench.cpp runs
// them, and ResNet-50's last stage; 3x3 convolutions have padding 1, 1x1 projections none.
const StepConv kShapes[] = {
    {"cnn conv1 1->32 28x28 b64", 64, 1, 28, 32, 3, 1},
    {"cnn conv2 32->64 14x14 b64", 64, 32, 14, 64, 3, 1},
    {"resnet stem 1->16 32x32 b32", 32, 1, 32, 16, 3, 1},
    {"resnet 16->16 32x32 b32", 32, 16, 32, 16, 3, 1},
    {"resnet 16->32 s2 32x32 b32", 32, 16, 32, 32, 3, 2},
    {"resnet proj 1x1 16->32 s2 b32", 32, 16, 32, 32, 1, 2},
    {"resnet 32->32 16x16 b32", 32, 32, 16, 32, 3, 1},
    {"resnet 32->64 s2 16x16 b32", 32, 32, 16, 64, 3, 2},
    {"resnet proj 1x1 32->64 s2 b32", 32, 32, 16, 64, 1, 2},
    {"resnet 64->64 8x8 b32", 32, 64, 8, 64, 3, 1},
    // ResNet-50's last stage at 128x128 (batch 16): large channels on 4x4 maps.
    {"r50 layer4 512->512 4x4 b16", 16, 512, 4, 512, 3, 1},
    {"r50 layer4 proj 1x1 1024->2048 s2 b16", 16, 1024, 8, 2048, 1, 2},
    {"r50 layer4 1x1 2048->512 4x4 b16", 16, 2048, 4, 512, 1, 1},
    // 1x1 convolutions on NCHW: ResNet-50's at 128x128 in eager mode, MobileNet-v1's pointwise
    // ones (batch 16, 224x224), which lazy mode leaves NCHW between depthwise ones.
    {"r50 layer1 1x1 64->256 32x32 b16", 16, 64, 32, 256, 1, 1},
    {"r50 layer3 1x1 256->1024 8x8 b16", 16, 256, 8, 1024, 1, 1},
    {"mobilenet pw 64->128 28x28 b16", 16, 64, 28, 128, 1, 1},
    {"mobilenet pw 256->256 14x14 b16", 16, 256, 14, 256, 1, 1},
    {"mobilenet pw 512->512 7x7 b16", 16, 512, 7, 512, 1, 1},
};
constexpr int kNumShapes = sizeof(kShapes) / sizeof(kShapes[0]);

const char* const kPasses[] = {"forward", "input grad", "weight grad"};
const char* const kPaths[] = {"im2col", "onednn", "one channel"};
const char* const kBf16Paths[] = {"bf16 via f32", "onednn bf16", "one channel bf16"};
bool g_epilogue = false;
lt::DType g_dtype = lt::DType::F32;

struct Tensor {
  lt::TensorType type;
  std::vector<char> bytes;
  lt::rt::TensorRef ref() { return {bytes.data(), &type}; }
};

// The values used here (powers of two) are exact in bf16: its bits are f32's upper half.
uint16_t bf16_bits(float v) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16); }
float from_bf16(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

Tensor filled(lt::Shape shape, float v) {
  lt::TensorType t{g_dtype, std::move(shape)};
  Tensor out{t, std::vector<char>(t.numel() * lt::dtype_size(g_dtype))};
  for (int64_t i = 0; i < t.numel(); ++i)
    if (g_dtype == lt::DType::BF16) reinterpret_cast<uint16_t*>(out.bytes.data())[i] = bf16_bits(v);
    else reinterpret_cast<float*>(out.bytes.data())[i] = v;
  return out;
}

/// A pass on bf16 operands without oneDNN's bf16 kernels: widened to f32 for the f32 entry point.
void bf16_via_f32(lt::rt::ConvPass pass, const lt::ir::ConvAttrs& a, lt::rt::Ins in,
                  lt::rt::Outs out, const lt::rt::OutputBlocks* blocks) {
  using namespace lt::rt;
  conv_low_via_f32(in, out, blocks, [&](Ins i, Outs o, const OutputBlocks* b) {
    switch (pass) {
      case ConvPass::Forward: return conv2d(a, i, o, b);
      case ConvPass::InputGrad: return conv2d_input_grad(a, i, o);
      case ConvPass::WeightGrad: return conv2d_weight_grad(a, i, o);
    }
  });
}

void BM_StepConv(benchmark::State& st) {
  const StepConv& s = kShapes[st.range(0)];
  const auto pass = static_cast<lt::rt::ConvPass>(st.range(1));
  const bool onednn = st.range(2) == 1, one_channel = st.range(2) == 2;
  lt::rt::set_num_threads(static_cast<int>(st.range(3)));
  lt::ir::ConvAttrs a;
  a.stride = {s.stride, s.stride};
  a.padding = {s.k / 2, s.k / 2};
  a.channels_last = one_channel;
  const lt::Shape xs = one_channel ? lt::Shape{s.n, s.hw, s.hw, s.c}
                                   : lt::Shape{s.n, s.c, s.hw, s.hw};
  Tensor x = filled(xs, 0.5f), w = filled({s.o, s.c, s.k, s.k}, 0.25f);
  const std::vector<lt::TensorType> xw = {x.type, w.type};
  Tensor y = filled(lt::ir::infer_types(lt::ir::Op::Conv2d, xw, a).at(0).shape, 0.125f);
  const lt::rt::ConvGeom g = lt::rt::make_geom(x.type.shape, w.type.shape, y.type.shape, a);
  if (one_channel && !lt::rt::one_channel_conv_supported(pass, g, g_dtype, g_dtype)) {
    st.SkipWithError("the one-channel kernel runs the forward and weight gradient of one input "
                     "channel");
    return;
  }
  if (onednn && !lt::rt::onednn_conv_supported(pass, g, g_dtype)) {
    st.SkipWithError(g_dtype == lt::DType::BF16
                         ? "oneDNN has no bf16 JIT kernel for it (or the CPU no bf16 instructions)"
                         : "oneDNN has no JIT kernel for it");
    return;
  }
  const bool bf16 = g_dtype == lt::DType::BF16;
  double sink = 0;
  lt::rt::OutputBlocks blocks;
  blocks.block_elems = g.out_image();
  blocks.done = [&](int64_t begin, int64_t end, const void* data) {
    float s = 0;
    for (int64_t i = 0; i < end - begin; ++i) {
      const float v = bf16 ? from_bf16(static_cast<const uint16_t*>(data)[i])
                           : static_cast<const float*>(data)[i];
      s += v > 0 ? v : 0;
    }
    sink += s;  // racy between threads, but only kept alive
  };
  auto run = [&] {
    using namespace lt::rt;
    const OutputBlocks* b = g_epilogue && pass == ConvPass::Forward ? &blocks : nullptr;
    const TensorRef fwd_in[] = {x.ref(), w.ref()}, fwd_out[] = {y.ref()};
    const TensorRef gx_in[] = {y.ref(), w.ref()}, gx_out[] = {x.ref()};
    const TensorRef gw_in[] = {x.ref(), y.ref()}, gw_out[] = {w.ref()};
    const bool fwd = pass == ConvPass::Forward, gx = pass == ConvPass::InputGrad;
    const Ins in = fwd ? Ins(fwd_in) : gx ? Ins(gx_in) : Ins(gw_in);
    const Outs out = fwd ? Outs(fwd_out) : gx ? Outs(gx_out) : Outs(gw_out);
    if (one_channel)
      return pass == ConvPass::Forward ? conv2d_one_channel(a, in, out, b)
                                       : conv2d_weight_grad_one_channel(a, in, out);
    if (bf16 && !onednn) return bf16_via_f32(pass, a, in, out, b);
    switch (pass) {
      case ConvPass::Forward:
        return onednn ? conv2d_onednn(a, in, out, b) : conv2d_im2col(a, in, out, b);
      case ConvPass::InputGrad:
        return onednn ? conv2d_input_grad_onednn(a, in, out) : conv2d_input_grad_im2col(a, in, out);
      case ConvPass::WeightGrad:
        return onednn ? conv2d_weight_grad_onednn(a, in, out)
                      : conv2d_weight_grad_im2col(a, in, out);
    }
  };
  run();  // creates the oneDNN primitives outside the timing
  for (auto _ : st) {
    run();
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(sink);
  st.SetLabel(std::string(s.name) + ", " + kPasses[st.range(1)] + ", " +
              (bf16 ? kBf16Paths : kPaths)[st.range(2)]);
  const double flops = 2.0 * g.n * g.o * g.col_rows() * g.col_cols();
  st.counters["GFLOP/s"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_StepConv)->ArgNames({"shape", "pass", "path", "threads"})
    ->ArgsProduct({benchmark::CreateDenseRange(0, kNumShapes - 1, 1), {0, 1, 2}, {0, 1, 2}, {1, 2}})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // --help prints the benchmark flags and exits with 0
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--epilogue") g_epilogue = true;
    else if (std::string(argv[i]) == "--bf16") g_dtype = lt::DType::BF16;
    else return (std::fprintf(stderr, "unknown argument %s\n", argv[i]), lt::cli::kExitBadInput);
  std::printf("gemm backend: %s; bf16 gemm: %s; operands: %s; epilogue: %s\n",
              lt::rt::gemm_backend(), lt::rt::gemm_bf16_backend(),
              g_dtype == lt::DType::BF16 ? "bf16" : "f32", g_epilogue ? "yes" : "no");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
