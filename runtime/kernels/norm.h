// Batch and layer normalization kernels (runtime/kernels/norm.cpp), called by run_nn. Their own
// file because the statistics passes alone would push nn.cpp past the size the style asks for.
#pragma once
#include "runtime/kernels/kernel.h"

namespace lt::rt {

/// (x[N,C,...], gamma[C], beta[C], running_mean[C], running_var[C]) -> (y, mean[C], invstd[C],
/// running_mean', running_var') with batch statistics (biased var for y, unbiased for the
/// running variance); C is x's dim attrs.axis (1, or the last for channels-last).
void batch_norm(const ir::BatchNormAttrs& attrs, Ins in, Outs out);
/// (x, gamma, mean[C], invstd[C], gy) -> (dx, dgamma[C], dbeta[C]): batch norm's gradient with
/// batch statistics; channel axis `axis` as batch_norm's. A bf16 dx (out[0]'s dtype, the
/// bf16_dx attribute) is the f32 one rounded as a cast rounds it.
void batch_norm_grad(int64_t axis, Ins in, Outs out);
/// (x, gamma, beta) normalized over the trailing gamma.rank() dims -> (y, mean, rstd).
void layer_norm(double eps, Ins in, Outs out);
/// (x, gamma, mean, rstd, gy) -> (dx, dgamma, dbeta): layer norm's gradient, rows of
/// gamma.numel() values.
void layer_norm_grad(Ins in, Outs out);

}  // namespace lt::rt
