// Reduction and view op functions: argument normalization (negative axes, -1 sizes, Python-style
// slice bounds) happens here, so the IR only sees canonical attributes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "frontend/dispatch.h"
#include "frontend/views.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

int64_t norm_axis(int64_t axis, int64_t rank, std::string_view op, const Tensor& x,
                  const Loc& loc) {
  if (axis < -rank || axis >= rank)
    fail_op(op, fmt::format("axis {} out of range for rank {}", axis, rank), {&x, 1}, loc);
  return axis < 0 ? axis + rank : axis;
}

ir::ReduceAttrs reduce_attrs(const Tensor& x, Axes axes, bool keepdim, std::string_view op,
                             const Loc& loc) {
  for (int64_t& a : axes) a = norm_axis(a, x.rank(), op, x, loc);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    fail_op(op, fmt::format("repeated axis in [{}]", fmt::join(axes, ",")), {&x, 1}, loc);
  // Reducing every axis is spelled as the empty list, so both forms hash alike.
  if (static_cast<int64_t>(axes.size()) == x.rank()) axes.clear();
  return {std::move(axes), keepdim};
}

Tensor reduce(Op op, const Tensor& x, Axes axes, bool keepdim, const Loc& loc) {
  if (!x.defined()) fail_op(ir::mnemonic(op), "operand is an undefined tensor", {&x, 1}, loc);
  return apply1_promoted(op, {&x, 1},
                         reduce_attrs(x, std::move(axes), keepdim, ir::mnemonic(op), loc), loc);
}

}  // namespace

Tensor sum(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::Sum, x, std::move(axes), keepdim, loc);
}
Tensor mean(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::Mean, x, std::move(axes), keepdim, loc);
}
Tensor max(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::ReduceMax, x, std::move(axes), keepdim, loc);
}
Tensor min(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::ReduceMin, x, std::move(axes), keepdim, loc);
}
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::LogSumExp, x, std::move(axes), keepdim, loc);
}
Tensor prod(const Tensor& x, Axes axes, bool keepdim, Loc loc) {
  return reduce(Op::Prod, x, std::move(axes), keepdim, loc);
}
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim, Loc loc) {
  if (!x.defined()) fail_op("argmax", "operand is an undefined tensor", {&x, 1}, loc);
  ir::ReduceAttrs a{{norm_axis(axis, x.rank(), "argmax", x, loc)}, keepdim};
  return apply1(Op::ArgMax, {&x, 1}, std::move(a), loc);
}

Tensor sum_to(const Tensor& x, const Shape& shape, Loc loc) {
  if (x.shape() == shape) return x;
  const int64_t lead = x.rank() - static_cast<int64_t>(shape.size());
  if (lead < 0) fail_op("sum_to", fmt::format("cannot sum to {}", shape_str(shape)), {&x, 1}, loc);
  Axes axes;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i < lead || (shape[i - lead] == 1 && x.shape()[i] != 1)) axes.push_back(i);
  Tensor s = axes.empty() ? x : sum(x, axes, true, loc);
  return s.shape() == shape ? s : reshape(s, shape, loc);
}

namespace {

/// The shape with its one -1 inferred from x's element count.
Shape infer_shape(const Tensor& x, Shape shape, const char* op, const Loc& loc) {
  auto infer = std::find(shape.begin(), shape.end(), -1);
  if (infer != shape.end()) {
    int64_t known = 1;
    for (auto it = shape.begin(); it != shape.end(); ++it)
      if (it != infer) known *= *it;
    if (known <= 0 || x.numel() % known != 0)
      fail_op(op, fmt::format("cannot reshape to {}", shape_str(shape)), {&x, 1}, loc);
    *infer = x.numel() / known;
  }
  return shape;
}

/// The op's result on x, made a view of x's base.
Tensor viewed(Op op, const Tensor& x, ir::Attrs attrs, const Loc& loc) {
  Tensor out = apply1(op, {&x, 1}, attrs, loc);
  link_view(x, out, op, std::move(attrs));
  return out;
}

}  // namespace

Tensor reshape(const Tensor& x, Shape shape, Loc loc) {
  if (!x.defined()) fail_op("reshape", "operand is an undefined tensor", {&x, 1}, loc);
  shape = infer_shape(x, std::move(shape), "reshape", loc);
  if (shape == x.shape()) return x;
  if (numel(shape) == x.numel() &&
      !reshaped_strides(x.shape(), strides_of(*x.impl()), shape))  // PyTorch copies
    return apply1(Op::Reshape, {&x, 1}, ir::ReshapeAttrs{std::move(shape)}, loc);
  return viewed(Op::Reshape, x, ir::ReshapeAttrs{std::move(shape)}, loc);
}

Tensor view(const Tensor& x, Shape shape, Loc loc) {
  if (!x.defined()) fail_op("view", "operand is an undefined tensor", {&x, 1}, loc);
  shape = infer_shape(x, std::move(shape), "view", loc);
  if (numel(shape) == x.numel() && !reshaped_strides(x.shape(), strides_of(*x.impl()), shape))
    fail_op("view",
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead.",
            {&x, 1}, loc);
  if (shape == x.shape()) return x;
  return viewed(Op::Reshape, x, ir::ReshapeAttrs{std::move(shape)}, loc);
}

Tensor contiguous(const Tensor& x, Loc loc) {
  if (!x.defined()) fail_op("contiguous", "operand is an undefined tensor", {&x, 1}, loc);
  return is_contiguous(x.shape(), strides_of(*x.impl())) ? x : clone(x, loc);
}

Tensor clone(const Tensor& x, Loc loc) {
  if (!x.defined()) fail_op("clone", "operand is an undefined tensor", {&x, 1}, loc);
  // The identity reshape: a copy in eager mode, the same value in the graph.
  return apply1(Op::Reshape, {&x, 1}, ir::ReshapeAttrs{x.shape()}, loc);
}

Tensor permute(const Tensor& x, Axes perm, Loc loc) {
  if (!x.defined()) fail_op("permute", "operand is an undefined tensor", {&x, 1}, loc);
  for (int64_t& p : perm)
    if (p < 0) p += x.rank();
  return viewed(Op::Permute, x, ir::PermuteAttrs{std::move(perm)}, loc);
}

Tensor transpose(const Tensor& x, int64_t a, int64_t b, Loc loc) {
  if (!x.defined()) fail_op("transpose", "operand is an undefined tensor", {&x, 1}, loc);
  a = norm_axis(a, x.rank(), "transpose", x, loc);
  b = norm_axis(b, x.rank(), "transpose", x, loc);
  Axes perm(x.rank());
  for (int64_t i = 0; i < x.rank(); ++i) perm[i] = i;
  std::swap(perm[a], perm[b]);
  return permute(x, std::move(perm), loc);
}

Tensor expand(const Tensor& x, Shape shape, Loc loc) {
  if (!x.defined()) fail_op("expand", "operand is an undefined tensor", {&x, 1}, loc);
  const int64_t lead = static_cast<int64_t>(shape.size()) - x.rank();
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (shape[i] == -1 && i >= lead) shape[i] = x.shape()[i - lead];
  if (shape == x.shape()) return x;
  return viewed(Op::Expand, x, ir::ExpandAttrs{std::move(shape)}, loc);
}

Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step, Loc loc) {
  if (!x.defined()) fail_op("slice", "operand is an undefined tensor", {&x, 1}, loc);
  axis = norm_axis(axis, x.rank(), "slice", x, loc);
  if (step <= 0) fail_op("slice", fmt::format("step must be positive, got {}", step), {&x, 1}, loc);
  const int64_t d = x.shape()[axis];
  auto clamp = [d](int64_t i) { return std::clamp(i < 0 ? i + d : i, int64_t{0}, d); };
  start = clamp(start);
  stop = std::max(start, clamp(stop));
  ir::SliceAttrs a;
  for (int64_t i = 0; i < x.rank(); ++i) {
    a.start.push_back(i == axis ? start : 0);
    a.stop.push_back(i == axis ? stop : x.shape()[i]);
    a.step.push_back(i == axis ? step : 1);
  }
  return viewed(Op::Slice, x, std::move(a), loc);
}

Tensor concat(std::span<const Tensor> xs, int64_t axis, Loc loc) {
  if (xs.empty()) fail_op("concat", "needs at least one tensor", xs, loc);
  if (!xs[0].defined()) fail_op("concat", "operand is an undefined tensor", xs, loc);
  axis = norm_axis(axis, xs[0].rank(), "concat", xs[0], loc);
  if (xs.size() == 1) return xs[0];
  return apply1_promoted(Op::Concat, xs, ir::ConcatAttrs{axis}, loc);
}
Tensor concat(std::initializer_list<Tensor> xs, int64_t axis, Loc loc) {
  return concat(std::span<const Tensor>(xs.begin(), xs.size()), axis, loc);
}

Tensor pad(const Tensor& x, std::vector<std::pair<int64_t, int64_t>> pads, double value, Loc loc) {
  if (!x.defined()) fail_op("pad", "operand is an undefined tensor", {&x, 1}, loc);
  if (static_cast<int64_t>(pads.size()) > x.rank())
    fail_op("pad", fmt::format("{} pad pairs for rank {}", pads.size(), x.rank()), {&x, 1}, loc);
  ir::PadAttrs a{Axes(x.rank(), 0), Axes(x.rank(), 0), value};
  for (size_t i = 0; i < pads.size(); ++i) std::tie(a.lo[i], a.hi[i]) = pads[i];
  return apply1(Op::Pad, {&x, 1}, std::move(a), loc);
}

Tensor squeeze(const Tensor& x, int64_t axis, Loc loc) {
  if (!x.defined()) fail_op("squeeze", "operand is an undefined tensor", {&x, 1}, loc);
  axis = norm_axis(axis, x.rank(), "squeeze", x, loc);
  if (x.shape()[axis] != 1)
    fail_op("squeeze", fmt::format("axis {} has size {}, not 1", axis, x.shape()[axis]), {&x, 1},
            loc);
  Shape s = x.shape();
  s.erase(s.begin() + axis);
  return reshape(x, std::move(s), loc);
}

Tensor unsqueeze(const Tensor& x, int64_t axis, Loc loc) {
  if (!x.defined()) fail_op("unsqueeze", "operand is an undefined tensor", {&x, 1}, loc);
  axis = norm_axis(axis, x.rank() + 1, "unsqueeze", x, loc);
  Shape s = x.shape();
  s.insert(s.begin() + axis, 1);
  return reshape(x, std::move(s), loc);
}

Tensor flatten(const Tensor& x, int64_t start_axis, int64_t end_axis, Loc loc) {
  if (!x.defined()) fail_op("flatten", "operand is an undefined tensor", {&x, 1}, loc);
  if (x.rank() == 0) return reshape(x, {1}, loc);
  start_axis = norm_axis(start_axis, x.rank(), "flatten", x, loc);
  end_axis = norm_axis(end_axis, x.rank(), "flatten", x, loc);
  Shape s(x.shape().begin(), x.shape().begin() + start_axis);
  int64_t n = 1;
  for (int64_t i = start_axis; i <= end_axis; ++i) n *= x.shape()[i];
  s.push_back(n);
  s.insert(s.end(), x.shape().begin() + end_axis + 1, x.shape().end());
  return reshape(x, std::move(s), loc);
}

}  // namespace lt
