// Batch and layer normalization kernels (runtime/kernels/norm.cpp), called by run_nn. Their own
// file because the statistics passes alone would push nn.cpp past the size the style asks for.
#pragma once
#include "runtime/kernels/kernel.h"

namespace lt::rt {

/// (x[N,C,...], gamma[C], beta[C]) -> (y, mean[C], invstd[C]) with batch statistics (biased var).
void batch_norm(double eps, Ins in, Outs out);
/// (x, gamma, beta) normalized over the trailing gamma.rank() dims -> (y, mean, rstd).
void layer_norm(double eps, Ins in, Outs out);

}  // namespace lt::rt
