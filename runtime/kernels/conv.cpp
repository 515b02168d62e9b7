// conv2d and its gradients: oneDNN's direct convolutions for f32 where it has a JIT kernel for the
// geometry and measured faster, and for bf16 wherever it has a bf16 kernel (CPUs with bf16
// instructions); a direct kernel of lazytrain's own for the forward and weight gradient of one
// input channel on channels-last outputs; the weight gradient of channels-last convolutions as
// one GEMM where oneDNN's direct kernel runs far below the GEMM rate (bf16 on AMX, f32 1x1s of
// few output pixels); im2col around rt::gemm for the rest, for f64 and for f32 NCHW 1x1s of
// large maps (a GEMM per image, no im2col); f16, and bf16 without
// such a kernel, through the f32 paths on widened copies (conv_paths.h). bf16 and f16 operands
// give an f32 result where the attributes say f32_out. Channels-last activations take oneDNN
// where NCHW ones would, and the NCHW paths on permuted copies otherwise.
#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/kernels/onednn_matmul.h"

namespace lt::rt {
namespace {

/// f32: where oneDNN measured faster (docs/BENCHMARKS.md, "Convolutions"): the forward and input
/// gradient from 16 input channels per group on or depthwise, and the weight gradient from 16
/// on, or of every convolution where oneDNN has AVX-512 kernels. With fewer channels im2col's
/// short GEMMs win: oneDNN's kernels for them are slow on the input gradient, the forward spends
/// its time reordering its wide outputs back to NCHW, and its AVX2 weight gradient of a
/// 1-channel input is slower than im2col's. bf16: every pass oneDNN has a bf16 kernel for, which
/// saves the widened copies and the f32 convolution's twice-as-wide reads.
constexpr int64_t kGemmPointwisePixels = 28 * 28;

bool use_onednn(ConvPass pass, const ConvGeom& g, DType t, DType out) {
  if (t == DType::BF16) return onednn_conv_supported(pass, g, t, out);
  if (t != DType::F32) return false;
  const bool all_channel_counts = pass == ConvPass::WeightGrad && onednn::has_avx512();
  // Depthwise (one input channel per group): oneDNN's depthwise kernels, where im2col runs a
  // one-row GEMM per channel.
  const bool depthwise = g.groups > 1 && g.cg() == 1;
  if (g.cg() < 16 && !all_channel_counts && !depthwise) return false;
  // An NCHW pointwise convolution of 28x28 output pixels or more runs faster as a GEMM per image
  // on the activations as they are than through oneDNN, which reorders them to its blocked
  // layout and back; on smaller maps oneDNN's batching of the images wins.
  if (!g.channels_last && g.pointwise() && g.groups == 1 && g.oh * g.ow >= kGemmPointwisePixels)
    return false;
  return onednn_conv_supported(pass, g, t);
}

bool low_precision(DType t) { return t == DType::BF16 || t == DType::F16; }

}  // namespace

void conv2d(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  const ConvGeom g = make_geom(in[0].shape(), in[1].shape(), out[0].shape(), a);
  if (one_channel_conv_supported(ConvPass::Forward, g, in[0].dtype(), out[0].dtype()))
    return conv2d_one_channel(a, in, out, blocks);
  if (use_onednn(ConvPass::Forward, g, in[0].dtype(), out[0].dtype()))
    return conv2d_onednn(a, in, out, blocks);
  if (low_precision(in[0].dtype()))
    return conv_low_via_f32(in, out, blocks, [&](Ins i, Outs o, const OutputBlocks* b) {
      conv2d(a, i, o, b);
    });
  if (a.channels_last) return conv_channels_last_via_nchw(ConvPass::Forward, a, in, out, blocks);
  conv2d_im2col(a, in, out, blocks);
}

void conv2d_input_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(out[0].shape(), in[1].shape(), in[0].shape(), a);
  if (use_onednn(ConvPass::InputGrad, g, in[0].dtype(), out[0].dtype()))
    return conv2d_input_grad_onednn(a, in, out);
  if (low_precision(in[0].dtype()))
    return conv_low_via_f32(in, out, nullptr, [&](Ins i, Outs o, const OutputBlocks*) {
      conv2d_input_grad(a, i, o);
    });
  if (a.channels_last)
    return conv_channels_last_via_nchw(ConvPass::InputGrad, a, in, out, nullptr);
  conv2d_input_grad_im2col(a, in, out);
}

void conv2d_weight_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  if (one_channel_conv_supported(ConvPass::WeightGrad, g, in[0].dtype(), out[0].dtype()))
    return conv2d_weight_grad_one_channel(a, in, out);
  if (weight_grad_gemm_supported(g, in[0].dtype(), out[0].dtype()))
    return conv2d_weight_grad_gemm(a, in, out);
  if (use_onednn(ConvPass::WeightGrad, g, in[0].dtype(), out[0].dtype()))
    return conv2d_weight_grad_onednn(a, in, out);
  if (low_precision(in[0].dtype()))
    return conv_low_via_f32(in, out, nullptr, [&](Ins i, Outs o, const OutputBlocks*) {
      conv2d_weight_grad(a, i, o);
    });
  if (a.channels_last)
    return conv_channels_last_via_nchw(ConvPass::WeightGrad, a, in, out, nullptr);
  conv2d_weight_grad_im2col(a, in, out);
}

}  // namespace lt::rt
