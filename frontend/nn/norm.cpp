// BatchNorm2d, BatchNorm1d and LayerNorm over the functional batch_norm and layer_norm.
#include "lt/nn/norm.h"

#include "frontend/nn/layer_args.h"
#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/nn/init.h"
#include "lt/nn/sync_batch_norm.h"
#include "lt/ops.h"

namespace lt::nn {

BatchNorm2d::BatchNorm2d(int64_t c, BatchNormOptions o) : BatchNorm2d(c, o, "BatchNorm2d") {}

BatchNorm2d::BatchNorm2d(int64_t c, BatchNormOptions o, const char* layer)
    : num_features(c), options(o), layer_(layer) {
  require(c >= 1, layer, "num_features must be >= 1, got {}", c);
  require(o.eps >= 0, layer, "eps must be >= 0, got {}", o.eps);
  require(o.momentum >= 0 && o.momentum <= 1, layer, "momentum {} outside [0, 1]", o.momentum);
  if (o.affine) {
    weight = register_parameter("weight", eager_full({c}, 1));
    bias = register_parameter("bias", eager_full({c}, 0));
  }
  if (o.track_running_stats) {
    running_mean = register_buffer("running_mean", eager_full({c}, 0));
    running_var = register_buffer("running_var", eager_full({c}, 1));
    num_batches_tracked = register_buffer("num_batches_tracked", eager_full({}, 0, DType::I64));
  }
}

void BatchNorm2d::reset_running_stats() {
  if (!options.track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  NoGradGuard no_grad;
  num_batches_tracked.copy_(eager_full({}, 0, DType::I64));
}

Tensor BatchNorm2d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (!x.defined() || x.rank() != 4 || x.shape()[1] != num_features)
      throw Error(fmt::format("BatchNorm2d(num_features={}): input {} is not [N, {}, H, W] at {}",
                              num_features, x.defined() ? type_str(x.type()) : "undefined",
                              num_features, location_str(loc)));
    if (is_training() && options.track_running_stats) {
      NoGradGuard no_grad;
      num_batches_tracked.add_(1, loc);
    }
    const bool batch_stats = is_training() || !options.track_running_stats;
    if (sync_stats && batch_stats && dist::world_size() > 1) return synced_forward(x, loc);
    // batch_norm updates the running statistics in place in training mode and reads them in eval
    // mode; without tracking they are undefined and batch statistics serve both modes.
    return batch_norm(x, weight, bias, running_mean, running_var,
                      is_training() || !options.track_running_stats, options.momentum, options.eps,
                      loc);
  });
}

Tensor BatchNorm2d::synced_forward(const Tensor& x, const Loc& loc) {
  const bool update = options.track_running_stats && is_training();
  return sync_batch_norm(x, weight, bias, update ? running_mean : Tensor(),
                         update ? running_var : Tensor(), options.momentum, options.eps, loc);
}

int convert_sync_batchnorm(Module& module) {
  int n = 0;
  module.apply([&](Module& m) {
    if (auto* bn = dynamic_cast<BatchNorm2d*>(&m)) {
      bn->sync_stats = true;
      ++n;
    }
  });
  return n;
}

std::string BatchNorm2d::name() const { return sync_stats ? "SyncBatchNorm" : layer_; }

BatchNorm1d::BatchNorm1d(int64_t c, BatchNormOptions o) : BatchNorm2d(c, o, "BatchNorm1d") {}

Tensor BatchNorm1d::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (!x.defined() || (x.rank() != 2 && x.rank() != 3))
      throw Error(fmt::format("BatchNorm1d: expected 2D or 3D input (got {}) at {}",
                              x.defined() ? fmt::format("{}D input", x.rank()) : "undefined",
                              location_str(loc)));
    if (x.shape()[1] != num_features)
      throw Error(fmt::format("BatchNorm1d(num_features={}): input {} is not [N, {}] or [N, {}, L] "
                              "at {}",
                              num_features, type_str(x.type()), num_features, num_features,
                              location_str(loc)));
    const Shape as_2d{x.shape()[0], num_features, x.rank() == 3 ? x.shape()[2] : 1, 1};
    return reshape(BatchNorm2d::forward(reshape(x, as_2d, loc), loc), x.shape(), loc);
  });
}

std::string BatchNorm2d::extra_repr() const {
  return fmt::format("{}, eps={}, momentum={}, affine={}, track_running_stats={}", num_features,
                     options.eps, options.momentum, options.affine,
                     options.track_running_stats);
}

LayerNorm::LayerNorm(Shape shape, double eps, bool affine)
    : normalized_shape(std::move(shape)), eps(eps) {
  require(!normalized_shape.empty(), "LayerNorm", "normalized_shape must not be empty");
  for (int64_t d : normalized_shape)
    require(d >= 1, "LayerNorm", "normalized_shape {} must be >= 1 in every dim",
            shape_str(normalized_shape));
  require(eps >= 0, "LayerNorm", "eps must be >= 0, got {}", eps);
  if (affine) {
    weight = register_parameter("weight", eager_full(normalized_shape, 1));
    bias = register_parameter("bias", eager_full(normalized_shape, 0));
  }
}

Tensor LayerNorm::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (weight.defined()) return layer_norm(x, weight, bias, eps, loc);
    // Without affine: the identity map, in x's dtype (ones and zeros are graph constants).
    const DType dt = x.defined() ? x.dtype() : DType::F32;
    return layer_norm(x, ones(normalized_shape, dt, loc), zeros(normalized_shape, dt, loc), eps,
                      loc);
  });
}

std::string LayerNorm::extra_repr() const {
  return fmt::format("{}, eps={}, elementwise_affine={}", shape_str(normalized_shape), eps,
                     weight.defined());
}

}  // namespace lt::nn
