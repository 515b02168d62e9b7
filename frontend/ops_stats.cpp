// Ops along one axis with PyTorch's signatures: argmin, max/min with indices, topk, cumsum, and
// var/std. argmin, topk and cumsum are rows; the rest are composed of differentiable rows.
#include <fmt/format.h>

#include <algorithm>

#include "frontend/dispatch.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

int64_t axis_of(const Tensor& x, int64_t axis, std::string_view op, const Loc& loc) {
  if (!x.defined()) fail_op(op, "operand is an undefined tensor", {&x, 1}, loc);
  const int64_t rank = x.rank();
  if (axis < -rank || axis >= rank)
    fail_op(op, fmt::format("dim {} out of range for rank {}", axis, rank), {&x, 1}, loc);
  return axis < 0 ? axis + rank : axis;
}

/// The element at `indices` (keepdim form) along `axis`, through where and sum, so the gradient
/// reaches that element only.
Tensor pick(const Tensor& x, const Tensor& indices, int64_t axis, bool keepdim, const Loc& loc) {
  Shape s(x.rank(), 1);
  s[axis] = x.shape()[axis];
  const Tensor positions =
      reshape(arange(0, static_cast<double>(x.shape()[axis]), 1, DType::I64, loc), s, loc);
  const Tensor at = eq(positions, indices, loc);
  const Tensor picked = sum(where(at, x, 0, loc), {axis}, keepdim, loc);
  return picked.dtype() == x.dtype() ? picked : cast(picked, x.dtype(), loc);  // i32: summed in i64
}

ValuesIndices extreme(Op op, const Tensor& x, int64_t dim, bool keepdim, const Loc& loc) {
  const char* name = op == Op::ArgMax ? "max" : "min";
  const int64_t axis = axis_of(x, dim, name, loc);
  const Tensor idx = apply1(op, {&x, 1}, ir::ReduceAttrs{{axis}, true}, loc);
  Tensor values = pick(x, idx, axis, keepdim, loc);
  return {std::move(values), keepdim ? idx : squeeze(idx, axis, loc)};
}

}  // namespace

Tensor argmin(const Tensor& x, int64_t axis, bool keepdim, Loc loc) {
  const int64_t a = axis_of(x, axis, "argmin", loc);
  return apply1(Op::ArgMin, {&x, 1}, ir::ReduceAttrs{{a}, keepdim}, loc);
}

namespace detail {
ValuesIndices max_along(const Tensor& x, int64_t dim, bool keepdim, Loc loc) {
  return extreme(Op::ArgMax, x, dim, keepdim, loc);
}
ValuesIndices min_along(const Tensor& x, int64_t dim, bool keepdim, Loc loc) {
  return extreme(Op::ArgMin, x, dim, keepdim, loc);
}
}  // namespace detail

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted, Loc loc) {
  (void)sorted;  // always sorted: an order PyTorch's unsorted result may also have
  const int64_t axis = axis_of(x, dim, "topk", loc);
  std::vector<Tensor> r = apply(Op::TopK, {&x, 1}, ir::TopKAttrs{k, axis, largest}, loc);
  return {std::move(r[0]), std::move(r[1])};
}

Tensor cumsum(const Tensor& x, int64_t dim, Loc loc) {
  const int64_t axis = axis_of(x, dim, "cumsum", loc);
  // PyTorch sums bool and integer tensors in int64.
  const Tensor in = is_float(x.dtype()) || x.dtype() == DType::I64 ? x : cast(x, DType::I64, loc);
  return apply1(Op::Cumsum, {&in, 1}, ir::CumsumAttrs{axis, false}, loc);
}

Tensor var(const Tensor& x, Axes dims, bool unbiased, bool keepdim, Loc loc) {
  if (!x.defined()) fail_op("var", "operand is an undefined tensor", {&x, 1}, loc);
  if (!is_float(x.dtype())) fail_op("var", "needs an f32 or f64 operand", {&x, 1}, loc);
  for (int64_t& d : dims) d = axis_of(x, d, "var", loc);
  int64_t n = 1;
  if (dims.empty()) n = x.numel();
  for (int64_t d : dims) n *= x.shape()[d];
  const Tensor d = sub(x, mean(x, dims, true, loc), loc);
  const Tensor ss = sum(mul(d, d, loc), dims, keepdim, loc);
  // n - 1 <= 0 divides by zero: inf, or NaN for a single element, as PyTorch gives.
  const double denom = static_cast<double>(n) - (unbiased ? 1 : 0);
  return div(ss, scalar_like(denom, ss, loc), loc);
}

Tensor std(const Tensor& x, Axes dims, bool unbiased, bool keepdim, Loc loc) {
  return sqrt(var(x, std::move(dims), unbiased, keepdim, loc), loc);
}

}  // namespace lt
