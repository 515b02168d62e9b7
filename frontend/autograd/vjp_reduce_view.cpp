// Gradients of the reduce and view families.
#include <algorithm>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "lt/ops.h"

namespace lt {
namespace {

/// Shape of x with the reduced axes kept as 1.
Shape keep_shape(const Tensor& x, const ir::ReduceAttrs& r) {
  Shape s = x.shape();
  for (int64_t i = 0; i < x.rank(); ++i)
    if (r.axes.empty() || std::binary_search(r.axes.begin(), r.axes.end(), i)) s[i] = 1;
  return s;
}

/// Gradient of a strided slice along one axis: zeros except every step-th element from start.
Tensor unslice_axis(const Tensor& g, int64_t axis, int64_t start, int64_t step, int64_t dim) {
  Tensor t = g;
  const int64_t n = g.shape()[axis];
  if (step > 1) {  // interleave step-1 zeros after each element: [n] -> [n, step] -> [n*step]
    t = unsqueeze(t, axis + 1);
    std::vector<std::pair<int64_t, int64_t>> p(t.rank(), {0, 0});
    p[axis + 1] = {0, step - 1};
    t = pad(t, p);
    t = flatten(t, axis, axis + 1);
  }
  const int64_t len = step > 1 ? n * step : n;
  if (start + len > dim) t = slice(t, axis, 0, dim - start);
  std::vector<std::pair<int64_t, int64_t>> p(t.rank(), {0, 0});
  p[axis] = {start, dim - start - t.shape()[axis]};
  return pad(t, p);
}

}  // namespace

std::vector<Tensor> vjp_reduce(ir::ReduceOp op, const VjpArgs& a) {
  const auto& r = std::get<ir::ReduceAttrs>(a.attrs);
  const Tensor& x = a.in[0];
  const Shape ks = keep_shape(x, r);
  const Tensor g = reshape(a.gout[0], ks);
  // The result with the reduced axes kept, for the ops whose gradient reads it (a traced op
  // fewer for every sum and mean).
  const auto y = [&] { return reshape(a.out[0], ks); };
  switch (op) {
    case ir::ReduceOp::Sum: return {expand(g, x.shape())};
    case ir::ReduceOp::Mean:
      return {
          expand(g * (static_cast<double>(numel(ks)) / static_cast<double>(x.numel())), x.shape())};
    case ir::ReduceOp::ReduceMax:
    case ir::ReduceOp::ReduceMin: {
      Tensor hit = cast(eq(x, y()), x.dtype());  // ties share the gradient evenly
      return {hit * (g / sum(hit, r.axes, true))};
    }
    case ir::ReduceOp::LogSumExp: return {g * exp(x - y())};
    case ir::ReduceOp::Prod: {
      // PyTorch's prod_backward: the product of the other elements, g y / x where x is not 0
      // (y is 0 there when any element is); at a zero, the product of the rest if it is the
      // only zero, else 0.
      const Tensor zero = eq(x, scalar_like(0, x));
      const Tensor one = scalar_like(1, x);
      const Tensor nonzero_x = where(zero, one, x);
      const Tensor zeros = sum(cast(zero, x.dtype()), r.axes, true);
      const Tensor rest = prod(nonzero_x, r.axes, true);
      return {where(zero, where(eq(zeros, one), g * rest, scalar_like(0, x)),
                    g * y() / nonzero_x)};
    }
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::ArgMin: return {Tensor()};
  }
  LT_UNREACHABLE();
}

std::vector<Tensor> vjp_view(ir::ViewOp op, const VjpArgs& a) {
  const Tensor& g = a.gout[0];
  const Tensor& x = a.in[0];
  switch (op) {
    case ir::ViewOp::Reshape: return {reshape(g, x.shape())};
    case ir::ViewOp::Permute: {
      const auto& perm = std::get<ir::PermuteAttrs>(a.attrs).perm;
      Axes inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
      return {permute(g, inv)};
    }
    case ir::ViewOp::Expand: return {sum_to(g, x.shape())};
    case ir::ViewOp::Slice: {
      const auto& s = std::get<ir::SliceAttrs>(a.attrs);
      Tensor t = g;
      for (int64_t i = 0; i < x.rank(); ++i)
        if (s.start[i] != 0 || s.step[i] != 1 || s.stop[i] != x.shape()[i])
          t = unslice_axis(t, i, s.start[i], s.step[i], x.shape()[i]);
      return {t};
    }
    case ir::ViewOp::Concat: {
      const int64_t axis = std::get<ir::ConcatAttrs>(a.attrs).axis;
      std::vector<Tensor> out;
      int64_t at = 0;
      for (const Tensor& in : a.in) {
        const int64_t n = in.shape()[axis];
        out.push_back(slice(g, axis, at, at + n));
        at += n;
      }
      return out;
    }
    case ir::ViewOp::Pad: {
      const auto& p = std::get<ir::PadAttrs>(a.attrs);
      Tensor t = g;
      for (int64_t i = 0; i < x.rank(); ++i)
        if (p.lo[i] || p.hi[i]) t = slice(t, i, p.lo[i], p.lo[i] + x.shape()[i]);
      return {t};
    }
  }
  LT_UNREACHABLE();
}

}  // namespace lt
