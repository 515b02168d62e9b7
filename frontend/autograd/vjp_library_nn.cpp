// Gradients of the library and nn families. Convolution, pooling and normalization gradients are
// ops of their own (library calls); the softmax gradients are written in lt:: ops, and so are
// gather's and scatter's, each other's.
#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "lt/ops.h"

namespace lt {
namespace {

const Loc kHere = Loc::current();

Tensor conv_input_grad(const Tensor& g, const Tensor& w, ir::ConvAttrs c, const Shape& x_shape) {
  c.grad_shape = x_shape;
  const Tensor in[] = {g, w};
  return apply1(ir::Op::Conv2dInputGrad, in, std::move(c), kHere);
}
Tensor conv_weight_grad(const Tensor& x, const Tensor& g, ir::ConvAttrs c, const Shape& w_shape) {
  c.grad_shape = w_shape;
  const Tensor in[] = {x, g};
  return apply1(ir::Op::Conv2dWeightGrad, in, std::move(c), kHere);
}
Tensor conv(const Tensor& x, const Tensor& w, ir::ConvAttrs c) {
  c.grad_shape.clear();
  const Tensor in[] = {x, w};
  return apply1(ir::Op::Conv2d, in, std::move(c), kHere);
}

/// t zero-padded at the end of each dim to `shape`: src's gradient where the index covers less
/// of it.
Tensor pad_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  std::vector<std::pair<int64_t, int64_t>> p;
  for (int64_t d = 0; d < t.rank(); ++d) p.push_back({0, shape[d] - t.shape()[d]});
  return pad(t, std::move(p));
}

/// scatter's and scatter_add's: (x, index, src) -> the incoming gradient (scatter: zeroed where
/// src was written), none, and the gradient gathered at the index for src.
std::vector<Tensor> scatter_vjp(bool add, const VjpArgs& a) {
  const int64_t axis = std::get<ir::AxisAttrs>(a.attrs).axis;
  const Tensor &g = a.gout[0], &index = a.in[1];
  Tensor gx, gsrc;
  if (a.need(0)) gx = add ? g : scatter(g, axis, index, 0.0, kHere);
  if (a.need(2)) gsrc = pad_to(gather(g, axis, index, kHere), a.in[2].shape());
  return {gx, Tensor(), gsrc};
}

std::vector<Tensor> matmul_vjp(const VjpArgs& a) {
  const auto& m = std::get<ir::MatMulAttrs>(a.attrs);
  const Tensor &A = a.in[0], &B = a.in[1], &g = a.gout[0];
  Tensor ga, gb;
  const bool want_a = a.need(0), want_b = a.need(1);
  if (!m.transpose_a && !m.transpose_b) {
    if (want_a) ga = matmul(g, B, false, true);
    if (want_b) gb = matmul(A, g, true, false);
  } else if (!m.transpose_a) {  // C = A B^T
    if (want_a) ga = matmul(g, B, false, false);
    if (want_b) gb = matmul(g, A, true, false);
  } else if (!m.transpose_b) {  // C = A^T B
    if (want_a) ga = matmul(B, g, false, true);
    if (want_b) gb = matmul(A, g, false, false);
  } else {  // C = A^T B^T
    if (want_a) ga = matmul(B, g, true, true);
    if (want_b) gb = matmul(g, A, true, true);
  }
  return {want_a ? sum_to(ga, A.shape()) : Tensor(), want_b ? sum_to(gb, B.shape()) : Tensor()};
}

std::vector<Tensor> batch_norm_vjp(const VjpArgs& a) {
  // A row of its own (one node, a kernel of two passes over x and gy): the formula in lt:: ops
  // is 17 traced nodes per layer. Only the gradient through y; mean and invstd feed nothing
  // differentiable, the running statistics are buffers.
  const Tensor in[] = {a.in[0], a.in[1], a.out[1], a.out[2], a.gout[0]};
  const ir::BatchNormGradAttrs axis{std::get<ir::BatchNormAttrs>(a.attrs).axis};
  std::vector<Tensor> g = apply(ir::Op::BatchNormGrad, in, axis, kHere);
  // A bf16 or f16 x (read widened) gets its gradient in its own dtype.
  const Tensor gx = g[0].dtype() == a.in[0].dtype() ? g[0] : cast(g[0], a.in[0].dtype(), kHere);
  return {gx, g[1], g[2], Tensor(), Tensor()};
}

std::vector<Tensor> layer_norm_vjp(const VjpArgs& a) {
  // A row of its own, as batch norm's: the formula in lt:: ops is 17 traced nodes per layer.
  const Tensor in[] = {a.in[0], a.in[1], a.out[1], a.out[2], a.gout[0]};
  std::vector<Tensor> g = apply(ir::Op::LayerNormGrad, in, ir::NoAttrs{}, kHere);
  return {g[0], g[1], g[2]};
}

}  // namespace

std::vector<Tensor> vjp_library(ir::LibraryOp op, const VjpArgs& a) {
  using enum ir::LibraryOp;
  const Tensor& g = a.gout[0];
  switch (op) {
    case MatMul: return matmul_vjp(a);
    case Conv2d: {
      const auto& c = std::get<ir::ConvAttrs>(a.attrs);
      return {a.need(0) ? conv_input_grad(g, a.in[1], c, a.in[0].shape()) : Tensor(),
              a.need(1) ? conv_weight_grad(a.in[0], g, c, a.in[1].shape()) : Tensor()};
    }
    case Conv2dInputGrad: {  // z = conv^T(go, w): <z, g> = <conv(g, w), go>
      const auto& c = std::get<ir::ConvAttrs>(a.attrs);
      return {a.need(0) ? conv(g, a.in[1], c) : Tensor(),
              a.need(1) ? conv_weight_grad(g, a.in[0], c, a.in[1].shape()) : Tensor()};
    }
    case Conv2dWeightGrad: {  // z = wgrad(x, go): <z, g> = <conv(x, g), go>
      const auto& c = std::get<ir::ConvAttrs>(a.attrs);
      return {a.need(0) ? conv_input_grad(a.in[1], g, c, a.in[0].shape()) : Tensor(),
              a.need(1) ? conv(a.in[0], g, c) : Tensor()};
    }
    case MaxPool2d: {
      const Tensor in[] = {a.in[0], g};
      return {apply1(ir::Op::MaxPool2dGrad, in, a.attrs, kHere)};
    }
    case MaxPool2dGrad: return {Tensor(), Tensor()};
    case AvgPool2d: {
      auto p = std::get<ir::PoolAttrs>(a.attrs);
      p.grad_shape = a.in[0].shape();
      return {apply1(ir::Op::AvgPool2dGrad, {&g, 1}, std::move(p), kHere)};
    }
    case AvgPool2dGrad: {  // linear: the adjoint of the adjoint is the pool itself
      auto p = std::get<ir::PoolAttrs>(a.attrs);
      p.grad_shape.clear();
      return {apply1(ir::Op::AvgPool2d, {&g, 1}, std::move(p), kHere)};
    }
  }
  LT_UNREACHABLE();
}

size_t vjp_outputs_read(ir::Op op, size_t outputs) {
  return op == ir::Op::BatchNorm || op == ir::Op::LayerNorm ? 1 : outputs;
}

std::vector<Tensor> vjp_nn(ir::NnOp op, const VjpArgs& a) {
  using enum ir::NnOp;
  const Tensor& g = a.gout[0];
  switch (op) {
    case BatchNorm: return batch_norm_vjp(a);
    case LayerNorm: return layer_norm_vjp(a);
    case Softmax: {
      const int64_t ax = std::get<ir::AxisAttrs>(a.attrs).axis;
      const Tensor& y = a.out[0];
      return {y * (g - sum(g * y, {ax}, true))};
    }
    case LogSoftmax: {
      const int64_t ax = std::get<ir::AxisAttrs>(a.attrs).axis;
      return {g - exp(a.out[0]) * sum(g, {ax}, true)};
    }
    case CrossEntropy: {
      // Ignored rows get no gradient; the rest share g over the count of counted rows.
      const Tensor &logits = a.in[0], &labels = a.in[1];
      const auto& ce = std::get<ir::CrossEntropyAttrs>(a.attrs);
      const int64_t c = logits.shape()[1];
      const Tensor counted = ne(labels, scalar(static_cast<double>(ce.ignore_index),
                                               labels.dtype()));
      const Tensor kept = unsqueeze(cast(counted, logits.dtype()), 1);
      Tensor target = one_hot(where(counted, labels, 0), c, logits.dtype());
      if (ce.label_smoothing > 0)
        target = target * (1.0 - ce.label_smoothing) + ce.label_smoothing / static_cast<double>(c);
      return {(softmax(logits, 1) - target) * kept * (g / sum(kept)), Tensor()};
    }
    case Embedding: {
      const Tensor in[] = {g, a.in[1]};
      return {apply1(ir::Op::EmbeddingGrad, in,
                     ir::EmbeddingGradAttrs{a.in[0].shape()[0]}, kHere),
              Tensor()};
    }
    case Gather: {  // the adjoint of reading at the index is adding at it
      const int64_t axis = std::get<ir::AxisAttrs>(a.attrs).axis;
      return {a.need(0) ? scatter_add(zeros_like(a.in[0]), axis, a.in[1], g, kHere) : Tensor(),
              Tensor()};
    }
    case Scatter: return scatter_vjp(false, a);
    case ScatterAdd: return scatter_vjp(true, a);
    case Cumsum: {  // the adjoint of a running sum is the running sum the other way
      auto c = std::get<ir::CumsumAttrs>(a.attrs);
      c.reverse = !c.reverse;
      return {apply1(ir::Op::Cumsum, {&g, 1}, c, kHere)};
    }
    case BatchNormGrad:
    case LayerNormGrad:
    case EmbeddingGrad:
    case OneHot:
    case TopK:
    case OptBarrier: return std::vector<Tensor>(a.in.size());
  }
  LT_UNREACHABLE();
}

}  // namespace lt
