// conv2d and its gradients: oneDNN's direct convolutions for f32 where it has a JIT kernel for the
// geometry (3-5x the im2col path's GFLOP/s at the trainers' shapes, docs/BENCHMARKS.md), im2col
// around rt::gemm for the rest and for f64 (conv_paths.h).
#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/library_kernels.h"

namespace lt::rt {

void conv2d(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  const ConvGeom g = make_geom(in[0].shape(), in[1].shape(), out[0].shape(), a);
  if (out[0].dtype() == DType::F32 && onednn_conv_supported(ConvPass::Forward, g))
    return conv2d_onednn(a, in, out, blocks);
  conv2d_im2col(a, in, out, blocks);
}

void conv2d_input_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(out[0].shape(), in[1].shape(), in[0].shape(), a);
  if (out[0].dtype() == DType::F32 && onednn_conv_supported(ConvPass::InputGrad, g))
    return conv2d_input_grad_onednn(a, in, out);
  conv2d_input_grad_im2col(a, in, out);
}

void conv2d_weight_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  if (out[0].dtype() == DType::F32 && onednn_conv_supported(ConvPass::WeightGrad, g))
    return conv2d_weight_grad_onednn(a, in, out);
  conv2d_weight_grad_im2col(a, in, out);
}

}  // namespace lt::rt
