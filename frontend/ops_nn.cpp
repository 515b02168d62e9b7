// Library and neural-network op functions.
#include <fmt/format.h>

#include "frontend/dispatch.h"
#include "lt/autograd.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

Tensor matmul(const Tensor& a, const Tensor& b, Loc loc) { return matmul(a, b, false, false, loc); }

Tensor matmul(const Tensor& a, const Tensor& b, bool ta, bool tb, Loc loc) {
  const Tensor in[] = {a, b};
  return apply1(Op::MatMul, in, ir::MatMulAttrs{ta, tb}, loc);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b, Loc loc) {
  // [..., in] inputs fold to [rows, in], as PyTorch's linear does: one 2-D GEMM forward and one
  // per gradient, where a batched matmul would make the weight's gradient B small products
  // summed afterwards. Shapes that do not fit go to matmul as given, which names them.
  if (x.defined() && w.defined() && x.rank() > 2 && w.rank() == 2 && x.numel() > 0 &&
      x.shape().back() == w.shape()[1]) {
    Shape out = x.shape();
    out.back() = w.shape()[0];
    return reshape(linear(reshape(x, {-1, x.shape().back()}, loc), w, b, loc), out, loc);
  }
  Tensor y = matmul(x, w, false, true, loc);
  return b.defined() ? add(y, b, loc) : y;
}

Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, Conv2dOptions o, Loc loc) {
  const Tensor in[] = {x, w};
  Tensor y = apply1(Op::Conv2d, in,
                    ir::ConvAttrs{std::move(o.stride), std::move(o.padding), std::move(o.dilation),
                                  o.groups, {}},
                    loc);
  if (!bias.defined()) return y;
  if (bias.rank() != 1 || bias.shape()[0] != y.shape()[1])
    fail_op("conv2d", fmt::format("bias must be [{}]", y.shape()[1]), std::vector{x, w, bias}, loc);
  return add(y, reshape(bias, {1, bias.shape()[0], 1, 1}, loc), loc);
}

namespace {
ir::PoolAttrs pool_attrs(Pool2dOptions o) {
  if (o.stride.empty()) o.stride = o.kernel;
  return {std::move(o.kernel), std::move(o.stride), std::move(o.padding), {}, o.ceil_mode,
          o.count_include_pad};
}
}  // namespace

Tensor max_pool2d(const Tensor& x, Pool2dOptions o, Loc loc) {
  if (o.dilation != std::vector<int64_t>{1, 1} && o.dilation != std::vector<int64_t>{1})
    return max_pool2d_with_indices(x, std::move(o), loc).values;
  return apply1(Op::MaxPool2d, {&x, 1}, pool_attrs(std::move(o)), loc);
}
Tensor avg_pool2d(const Tensor& x, Pool2dOptions o, Loc loc) {
  if (o.dilation != std::vector<int64_t>{1, 1} && o.dilation != std::vector<int64_t>{1})
    fail_op("avg_pool2d", "dilation is for max pooling", {&x, 1}, loc);
  return apply1(Op::AvgPool2d, {&x, 1}, pool_attrs(std::move(o)), loc);
}
namespace {
int64_t softmax_axis(const Tensor& x, int64_t axis, std::string_view op, const Loc& loc) {
  if (!x.defined()) fail_op(op, "operand is an undefined tensor", {&x, 1}, loc);
  if (axis < -x.rank() || axis >= x.rank())
    fail_op(op, fmt::format("axis {} out of range for rank {}", axis, x.rank()), {&x, 1}, loc);
  return axis < 0 ? axis + x.rank() : axis;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t axis, Loc loc) {
  return apply1(Op::Softmax, {&x, 1}, ir::AxisAttrs{softmax_axis(x, axis, "softmax", loc)}, loc);
}
Tensor log_softmax(const Tensor& x, int64_t axis, Loc loc) {
  return apply1(Op::LogSoftmax, {&x, 1}, ir::AxisAttrs{softmax_axis(x, axis, "log_softmax", loc)},
                loc);
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps, Loc loc) {
  const Tensor in[] = {x, gamma, beta};
  return apply(Op::LayerNorm, in, ir::NormAttrs{eps}, loc)[0];
}

Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor running_mean,
                  Tensor running_var, bool training, double momentum, double eps, Loc loc) {
  if (!x.defined() || x.rank() < 2)
    fail_op("batch_norm", "input must have rank >= 2 (channels on axis 1)", {&x, 1}, loc);
  const int64_t c = x.shape()[1];
  // A bf16 or f16 x is read widened to f32 (the op's row allows it), which is also the dtype of
  // the parameters, the statistics and the result.
  const bool narrow = x.dtype() == DType::BF16 || x.dtype() == DType::F16;
  const DType dt = narrow ? DType::F32 : x.dtype();
  const Tensor g = gamma.defined() ? gamma : ones({c}, dt, loc);
  const Tensor b = beta.defined() ? beta : zeros({c}, dt, loc);
  Shape bshape(x.rank(), 1);
  bshape[1] = c;
  if (!training) {
    if (!running_mean.defined() || !running_var.defined())
      fail_op("batch_norm", "eval mode needs running_mean and running_var", {&x, 1}, loc);
    const Tensor xw = narrow ? cast(x, dt, loc) : x;
    Tensor scale = mul(g, rsqrt(add(running_var, scalar_like(eps, xw, loc), loc), loc), loc);
    Tensor shift = sub(b, mul(running_mean, scale, loc), loc);
    return add(mul(xw, reshape(scale, bshape, loc), loc), reshape(shift, bshape, loc), loc);
  }
  // The op moves the running statistics too (one traced node, not ten); without them it gets
  // zeros and ones of its own and their moved values are dropped.
  const bool track = running_mean.defined() && running_var.defined();
  const Tensor in[] = {x, g, b, track ? running_mean : zeros({c}, dt, loc),
                       track ? running_var : ones({c}, dt, loc)};
  std::vector<Tensor> r = apply(Op::BatchNorm, in, ir::BatchNormAttrs{eps, momentum}, loc);
  if (track) {
    NoGradGuard no_grad;
    running_mean.copy_(r[3], loc);
    running_var.copy_(r[4], loc);
  }
  return r[0];
}

Tensor embedding(const Tensor& table, const Tensor& ids, Loc loc) {
  const Tensor in[] = {table, ids};
  return apply1(Op::Embedding, in, ir::NoAttrs{}, loc);
}

Tensor one_hot(const Tensor& ids, int64_t num_classes, DType dtype, Loc loc) {
  return apply1(Op::OneHot, {&ids, 1}, ir::OneHotAttrs{num_classes, dtype}, loc);
}

std::vector<Tensor> optimization_barrier(std::span<const Tensor> tensors, Loc loc) {
  return apply(Op::OptBarrier, tensors, ir::NoAttrs{}, loc);
}

Tensor dropout(const Tensor& x, double p, bool training, Loc loc) {
  if (p < 0 || p > 1) fail_op("dropout", fmt::format("p = {} outside [0, 1]", p), {&x, 1}, loc);
  if (!training || p == 0) return x;
  if (p == 1) return mul(x, zeros_like(x, loc), loc);
  Tensor keep = ge(rand(x.shape(), x.dtype(), loc), scalar_like(p, x, loc), loc);
  return where(keep, mul(x, scalar_like(1 / (1 - p), x, loc), loc), scalar_like(0, x, loc), loc);
}

}  // namespace lt
