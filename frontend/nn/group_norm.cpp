// GroupNorm over the functional layer_norm: each example's group of channels is one row of
// layer_norm (its row and gradient), then the per-channel affine map.
#include <fmt/format.h>

#include "frontend/nn/layer_args.h"
#include "lt/nn/norm.h"
#include "lt/ops.h"

namespace lt::nn {

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps, bool affine)
    : num_groups(groups), num_channels(channels), eps(eps) {
  require(groups >= 1, "GroupNorm", "num_groups must be >= 1, got {}", groups);
  require(channels >= 1, "GroupNorm", "num_channels must be >= 1, got {}", channels);
  require(channels % groups == 0, "GroupNorm", "num_channels must be divisible by num_groups");
  require(eps >= 0, "GroupNorm", "eps must be >= 0, got {}", eps);
  if (affine) {
    weight = register_parameter("weight", eager_full({channels}, 1));
    bias = register_parameter("bias", eager_full({channels}, 0));
  }
}

Tensor GroupNorm::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    if (!x.defined() || x.rank() < 2 || x.shape()[1] != num_channels || x.shape()[0] < 1)
      throw Error(fmt::format("GroupNorm(num_groups={}, num_channels={}): input {} is not "
                              "[N, {}, *] at {}",
                              num_groups, num_channels,
                              x.defined() ? type_str(x.type()) : "undefined", num_channels,
                              location_str(loc)));
    const int64_t n = x.shape()[0];
    const int64_t per_group = x.numel() / (n * num_groups);
    // Constants of x's dtype (graph constants in lazy mode): the normalization alone.
    const Tensor grouped =
        layer_norm(reshape(x, {n, num_groups, per_group}, loc), ones({per_group}, x.dtype(), loc),
                   zeros({per_group}, x.dtype(), loc), eps, loc);
    Tensor y = reshape(grouped, x.shape(), loc);
    if (!weight.defined()) return y;
    Shape channel(static_cast<size_t>(x.rank()), 1);
    channel[1] = num_channels;
    return y * reshape(weight, channel, loc) + reshape(bias, channel, loc);
  });
}

std::string GroupNorm::extra_repr() const {
  return fmt::format("{}, {}, eps={}, affine={}", num_groups, num_channels, eps, weight.defined());
}

}  // namespace lt::nn
