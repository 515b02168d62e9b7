// SyncBatchNorm's normalization as a function: what a BatchNorm layer converted with
// convert_sync_batchnorm computes in training mode on a job of several ranks, for layers kept
// outside lt::nn (the Python package's lazytrain.nn.SyncBatchNorm).
#pragma once
#include "lt/tensor.h"

namespace lt::nn {

/// Normalizes x ([N, C, ...], rank >= 2) per channel with the batch statistics of every rank's
/// x (lt/dist.h; each rank's x of the same shape), all-reduced inside the step, then applies
/// weight and bias ([C], or both undefined). Defined running_mean and running_var ([C]) are
/// updated in place as BatchNorm's are (the unbiased variance over all ranks' elements).
Tensor sync_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       Tensor running_mean, Tensor running_var, double momentum, double eps,
                       Loc loc = Loc::current());

}  // namespace lt::nn
