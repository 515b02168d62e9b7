// Normalization layers: BatchNorm2d and BatchNorm1d (batch statistics, running averages as
// buffers), LayerNorm (per-example statistics over the trailing dims) and GroupNorm (per-example
// statistics over groups of channels).
#pragma once
#include <cstdint>

#include "lt/nn/module.h"

namespace lt::nn {

struct BatchNormOptions {
  double eps = 1e-5;
  /// running = (1 - momentum) * running + momentum * batch statistic.
  double momentum = 0.1;
  bool affine = true;  ///< learnable weight (ones) and bias (zeros)
  /// Keep running_mean/running_var/num_batches_tracked and use them in eval mode; without,
  /// batch statistics are used in both modes.
  bool track_running_stats = true;
};

/// Batch normalization of [N, C, H, W] over N, H, W per channel. Training mode normalizes with
/// the batch statistics and updates the buffers running_mean, running_var (unbiased, as
/// PyTorch) and num_batches_tracked (i64) as part of the step: in lazy mode the update is traced
/// with the forward, never a sync. Eval mode normalizes with the running statistics.
class BatchNorm2d : public Module {
 public:
  explicit BatchNorm2d(int64_t num_features, BatchNormOptions options = {});
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  /// Running statistics back to mean 0, variance 1, 0 batches.
  void reset_running_stats();
  /// "BatchNorm2d", or "SyncBatchNorm" once converted.
  std::string name() const override;
  std::string extra_repr() const override;

  const int64_t num_features;
  const BatchNormOptions options;
  Tensor weight, bias;                                    ///< undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  ///< undefined without tracking
  /// SyncBatchNorm (convert_sync_batchnorm): in training mode the batch statistics are over the
  /// inputs of every rank of a data-parallel job (lt/dist.h), all-reduced inside the step, so W
  /// ranks with batch B / W normalize as one process with batch B. In a job of one rank, or in
  /// eval mode, it is the plain layer.
  bool sync_stats = false;

 protected:
  /// For the variants over other ranks: `layer` names them in messages and str().
  BatchNorm2d(int64_t num_features, BatchNormOptions options, const char* layer);

 private:
  Tensor synced_forward(const Tensor& x, const Loc& loc);
  const char* layer_;
};

/// Batch normalization of [N, C] or [N, C, L] over N (and L) per channel: BatchNorm2d's
/// buffers, options, modes and SyncBatchNorm conversion, on the input seen as [N, C, L, 1].
class BatchNorm1d : public BatchNorm2d {
 public:
  explicit BatchNorm1d(int64_t num_features, BatchNormOptions options = {});
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
};

/// Turns every BatchNorm2d of `module` (itself included) into a synchronized one (sync_stats,
/// as torch.nn.SyncBatchNorm.convert_sync_batchnorm); returns how many. Every rank must convert
/// the same layers.
int convert_sync_batchnorm(Module& module);

/// Normalization over the trailing dims `normalized_shape` of each example, then an elementwise
/// affine map (weight ones, bias zeros) when elementwise_affine.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Shape normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const Shape normalized_shape;
  const double eps;
  Tensor weight, bias;  ///< undefined without elementwise_affine
};

/// Normalization of [N, C, *] over each example's groups of C / num_groups channels (and all of
/// *), biased variance, then a per-channel affine map (weight ones, bias zeros) when affine.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const int64_t num_groups, num_channels;
  const double eps;
  Tensor weight, bias;  ///< [num_channels]; undefined without affine
};

}  // namespace lt::nn
