// SyncBatchNorm on several ranks, as PyTorch's: the statistics are every rank's, all-reduced
// (the mean first, then the centered sum of squares: two passes as the unsynchronized kernel,
// rather than E[x^2] - E[x]^2, which loses digits in f32). The gradient is written by hand
// (lt/function.h): the two per-channel sums the input gradient needs, all-reduced in one
// collective, then one elementwise pass, where autograd through the forward's ops would take
// two more collectives and two more passes over the activations per layer. Every rank has the
// same batch size (the trainers split the global batch evenly).
#include "lt/nn/sync_batch_norm.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "lt/autograd.h"
#include "lt/dist.h"
#include "lt/function.h"
#include "lt/ops.h"

namespace lt::nn {

Tensor sync_batch_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                       Tensor running_mean, Tensor running_var, double momentum, double eps,
                       Loc loc) {
  if (!x.defined() || x.rank() < 2)
    throw Error(fmt::format("sync_batch_norm: input {} is not [N, C, ...] at {}",
                            x.defined() ? type_str(x.type()) : "undefined", location_str(loc)));
  const int64_t c = x.shape()[1];
  const bool affine = weight.defined();
  for (const Tensor* t : std::initializer_list<const Tensor*>{&weight, &bias, &running_mean,
                                                             &running_var})
    if (t->defined() && t->shape() != Shape{c})
      throw Error(fmt::format("sync_batch_norm: input {} has {} channels, a parameter or "
                              "running statistic is {} at {}",
                              type_str(x.type()), c, type_str(t->type()), location_str(loc)));
  if (affine != bias.defined())
    throw Error(fmt::format("sync_batch_norm: weight and bias are defined together at {}",
                            location_str(loc)));
  const double count = static_cast<double>(x.numel() / c * dist::world_size());
  Axes axes{0};
  Shape bshape(static_cast<size_t>(x.rank()), 1);
  bshape[1] = c;
  for (int64_t d = 2; d < x.rank(); ++d) axes.push_back(d);
  std::vector<Tensor> inputs{x};
  if (affine) inputs.insert(inputs.end(), {weight, bias});
  Tensor batch_mean, batch_var;
  const auto forward = [&](std::span<const Tensor> in) -> FunctionOutputs {
    batch_mean =
        dist::all_reduce(sum(in[0], axes, false, loc), dist::ReduceOp::Sum, loc) * (1 / count);
    const Tensor centered = in[0] - reshape(batch_mean, bshape, loc);
    batch_var = dist::all_reduce(sum(centered * centered, axes, false, loc),
                                 dist::ReduceOp::Sum, loc) *
                (1 / count);
    const Tensor invstd = rsqrt(batch_var + eps, loc);
    Tensor y = centered * reshape(affine ? invstd * in[1] : invstd, bshape, loc);
    if (affine) y = y + reshape(in[2], bshape, loc);
    return {{y}, {batch_mean, invstd}};
  };
  const auto backward = [c, count, axes, bshape, affine, loc](const FunctionGradArgs& a) {
    const Tensor& x = a.inputs[0];
    const Tensor& gy = a.grad_outputs[0];
    const Tensor invstd = reshape(a.saved[1], bshape, loc);
    const Tensor xhat = (x - reshape(a.saved[0], bshape, loc)) * invstd;
    const Tensor sum_dy = sum(gy, axes, false, loc);
    const Tensor sum_dy_xhat = sum(gy * xhat, axes, false, loc);
    std::vector<Tensor> g(a.inputs.size());
    if (affine) {  // this rank's sums, as every other parameter's gradient before its all-reduce
      g[1] = sum_dy_xhat;
      g[2] = sum_dy;
    }
    if (a.needs_input_grad[0]) {
      const Tensor means = dist::all_reduce(concat({sum_dy, sum_dy_xhat}, 0, loc),
                                            dist::ReduceOp::Sum, loc) *
                           (1 / count);
      const Tensor mean_dy = reshape(slice(means, 0, 0, c, 1, loc), bshape, loc);
      const Tensor mean_dy_xhat = reshape(slice(means, 0, c, 2 * c, 1, loc), bshape, loc);
      const Tensor k = affine ? invstd * reshape(a.inputs[1], bshape, loc) : invstd;
      g[0] = (gy - mean_dy - xhat * mean_dy_xhat) * k;
    }
    return g;
  };
  Tensor y = apply_function("SyncBatchNorm", inputs, forward, backward, loc)[0];
  if (running_mean.defined() && running_var.defined()) {
    NoGradGuard no_grad;
    running_mean.copy_(running_mean * (1 - momentum) + batch_mean * momentum, loc);
    running_var.copy_(running_var * (1 - momentum) +
                          batch_var * (momentum * count / std::max(count - 1, 1.0)),
                      loc);
  }
  return y;
}

}  // namespace lt::nn
