// The paths behind conv2d, conv2d_input_grad and conv2d_weight_grad (library_kernels.h), each
// callable on its own: the entry points (conv.cpp) pick one per call, and tests and benchmarks
// call them directly to compare them. Kernel-internal; same arguments as the entry points.
#pragma once
#include <functional>

#include "runtime/kernels/conv_geom.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

// im2col/col2im around rt::gemm (conv_im2col.cpp): f32 and f64, every geometry; NCHW only.
void conv2d_im2col(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks);
void conv2d_input_grad_im2col(const ir::ConvAttrs& a, Ins in, Outs out);
void conv2d_weight_grad_im2col(const ir::ConvAttrs& a, Ins in, Outs out);

/// Whether oneDNN runs this pass on `dtype` operands (f32, or bf16 on a CPU with bf16
/// instructions) to an `out_dtype` result (dtype, or f32 for bf16: f32_out) with one of its JIT
/// kernels (not its reference loops, nor its own im2col). g is the whole call's geometry.
bool onednn_conv_supported(ConvPass pass, const ConvGeom& g, DType dtype, DType out_dtype);
inline bool onednn_conv_supported(ConvPass pass, const ConvGeom& g, DType dtype) {
  return onednn_conv_supported(pass, g, dtype, dtype);
}

// oneDNN's direct convolutions (conv_onednn.cpp): f32 or bf16 (f32 accumulation, one rounding of
// a bf16 result, none of an f32 one), where onednn_conv_supported.
void conv2d_onednn(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks);
void conv2d_input_grad_onednn(const ir::ConvAttrs& a, Ins in, Outs out);
void conv2d_weight_grad_onednn(const ir::ConvAttrs& a, Ins in, Outs out);

/// Whether the direct one-channel path (conv_one_channel.cpp) runs this pass: the forward or the
/// weight gradient of a channels-last convolution of one input channel (groups 1) into a
/// multiple of 16 output channels, on f32 operands, or bf16 ones to a bf16 or f32 result.
bool one_channel_conv_supported(ConvPass pass, const ConvGeom& g, DType dtype, DType out_dtype);

// The direct one-channel convolutions, where one_channel_conv_supported: f32 sums, one rounding
// of a bf16 result; the forward's blocks are images.
void conv2d_one_channel(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks);
void conv2d_weight_grad_one_channel(const ir::ConvAttrs& a, Ins in, Outs out);

/// Whether the weight gradient of this convolution runs as one GEMM (conv_weight_grad_gemm.cpp),
/// on AVX-512 CPUs: a channels-last convolution without groups, of bf16 operands (to a bf16 or
/// f32 result) where the bf16 GEMM runs on AMX, or of f32 ones with a 1x1 kernel, no padding and
/// fewer than 1024 output pixels over the batch.
bool weight_grad_gemm_supported(const ConvGeom& g, DType dtype, DType out_dtype);
/// gw = gy^T x (the input rows the output pixels read, per tap), through rt::gemm.
void conv2d_weight_grad_gemm(const ir::ConvAttrs& a, Ins in, Outs out);

/// A pass on channels-last activations through the NCHW entry points (conv_channels_last.cpp):
/// the activations permuted to NCHW, the result permuted back; forward blocks go to the epilogue
/// once the output is whole.
void conv_channels_last_via_nchw(ConvPass pass, const ir::ConvAttrs& a, Ins in, Outs out,
                                 const OutputBlocks* blocks);

/// One pass of a convolution on f32 operands (one of the entry points, blocks unused but for the
/// forward).
using F32Conv = std::function<void(Ins in, Outs out, const OutputBlocks* blocks)>;

/// A pass on bf16 or f16 operands (conv_low_precision.cpp): widened to f32, run by f32_conv, the
/// result rounded to nearest even into out[0] (of the operands' dtype; or written as it is when
/// out[0] is f32, f32_out); per-image blocks stream to the epilogue as the f32 convolution
/// finishes them. The path of f16, and of bf16 where
/// oneDNN has no bf16 kernel.
void conv_low_via_f32(Ins in, Outs out, const OutputBlocks* blocks, const F32Conv& f32_conv);

}  // namespace lt::rt
