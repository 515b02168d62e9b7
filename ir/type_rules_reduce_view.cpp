// Reduce and view families.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ir/type_rules.h"

namespace lt::ir {

TypeList infer_reduce(ReduceOp op, std::span<const TensorType> in, const ReduceAttrs& a) {
  const TensorType& x = in[0];
  for (size_t i = 0; i < a.axes.size(); ++i) {
    if (a.axes[i] < 0 || a.axes[i] >= x.rank())
      type_fail(fmt::format("axis {} out of range for {}", a.axes[i], type_str(x)));
    if (i > 0 && a.axes[i] <= a.axes[i - 1])
      type_fail(fmt::format("axes must be sorted and unique, got [{}]", fmt::join(a.axes, ",")));
  }
  const bool all = a.axes.empty();
  auto reduced = [&](int64_t d) {
    return all || std::binary_search(a.axes.begin(), a.axes.end(), d);
  };
  for (int64_t d = 0; d < x.rank(); ++d)
    if (reduced(d) && x.shape[d] == 0 && op != ReduceOp::Sum &&
        op != ReduceOp::Prod)
      type_fail(fmt::format("cannot reduce an empty axis {} of {}", d, type_str(x)));
  if (!is_compute_type(x.dtype) || x.dtype == DType::Bool)
    type_fail(fmt::format("does not take {}", type_str(x)));
  const OpInfo& row = info(to_op(op));
  if (row.operands == OperandKind::Float && !is_float(x.dtype))
    type_fail(fmt::format("needs a float operand, got {}", type_str(x)));
  if ((op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) && a.axes.size() != 1)
    type_fail(fmt::format("reduces exactly one axis, got [{}]", fmt::join(a.axes, ",")));
  Shape s;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (!reduced(d)) s.push_back(x.shape[d]);
    else if (a.keepdim) s.push_back(1);
  }
  return {{row.result == ResultKind::I64 ? DType::I64 : x.dtype, std::move(s)}};
}

namespace {

TensorType reshape_rule(const TensorType& x, const ReshapeAttrs& a) {
  for (int64_t d : a.shape)
    if (d < 0) type_fail(fmt::format("negative size in shape {}", shape_str(a.shape)));
  if (!shape_fits(a.shape) || numel(a.shape) != x.numel())
    type_fail(fmt::format("cannot reshape {} to {}", type_str(x), shape_str(a.shape)));
  return {x.dtype, a.shape};
}

TensorType permute_rule(const TensorType& x, const PermuteAttrs& a) {
  if (static_cast<int64_t>(a.perm.size()) != x.rank())
    type_fail(fmt::format("perm [{}] does not match {}", fmt::join(a.perm, ","), type_str(x)));
  std::vector<bool> seen(a.perm.size());
  Shape s;
  for (int64_t p : a.perm) {
    if (p < 0 || p >= x.rank() || seen[p])
      type_fail(fmt::format("perm [{}] is not a permutation", fmt::join(a.perm, ",")));
    seen[p] = true;
    s.push_back(x.shape[p]);
  }
  return {x.dtype, std::move(s)};
}

TensorType expand_rule(const TensorType& x, const ExpandAttrs& a) {
  const int64_t r = static_cast<int64_t>(a.shape.size());
  if (r < x.rank())
    type_fail(fmt::format("cannot expand {} to {}", type_str(x), shape_str(a.shape)));
  for (int64_t i = 0; i < x.rank(); ++i) {
    int64_t from = x.shape[i], to = a.shape[r - x.rank() + i];
    if (from != to && from != 1)
      type_fail(fmt::format("cannot expand {} to {}", type_str(x), shape_str(a.shape)));
  }
  return {x.dtype, a.shape};
}

TensorType slice_rule(const TensorType& x, const SliceAttrs& a) {
  const size_t r = x.shape.size();
  if (a.start.size() != r || a.stop.size() != r || a.step.size() != r)
    type_fail(fmt::format("needs start/stop/step for each of the {} axes", r));
  Shape s(r);
  for (size_t i = 0; i < r; ++i) {
    if (a.step[i] <= 0) type_fail(fmt::format("step must be positive, got {}", a.step[i]));
    if (a.start[i] < 0 || a.start[i] > a.stop[i] || a.stop[i] > x.shape[i])
      type_fail(fmt::format("range [{}, {}) out of bounds for axis {} of {}", a.start[i],
                            a.stop[i], i, type_str(x)));
    s[i] = a.stop[i] == a.start[i] ? 0 : (a.stop[i] - a.start[i] - 1) / a.step[i] + 1;
  }
  return {x.dtype, std::move(s)};
}

TensorType concat_rule(std::span<const TensorType> in, const ConcatAttrs& a) {
  const TensorType& x = in[0];
  if (a.axis < 0 || a.axis >= x.rank())
    type_fail(fmt::format("axis {} out of range for {}", a.axis, type_str(x)));
  Shape s = x.shape;
  for (size_t i = 1; i < in.size(); ++i) {
    bool ok = in[i].dtype == x.dtype && in[i].rank() == x.rank();
    for (int64_t d = 0; ok && d < x.rank(); ++d) ok = d == a.axis || in[i].shape[d] == x.shape[d];
    if (!ok)
      type_fail(fmt::format("cannot concat {} with {} along axis {}", type_str(x),
                            type_str(in[i]), a.axis));
    s[a.axis] = saturating_add(s[a.axis], in[i].shape[a.axis]);
  }
  return {x.dtype, std::move(s)};
}

TensorType pad_rule(const TensorType& x, const PadAttrs& a) {
  if (static_cast<int64_t>(a.lo.size()) != x.rank() ||
      static_cast<int64_t>(a.hi.size()) != x.rank())
    type_fail(fmt::format("needs lo/hi for each of the {} axes", x.rank()));
  Shape s = x.shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (a.lo[i] < 0 || a.hi[i] < 0)
      type_fail(fmt::format("negative padding on axis {}", i));
    s[i] = saturating_add(s[i], saturating_add(a.lo[i], a.hi[i]));
  }
  if (!holds_value(x.dtype, a.value))
    type_fail(fmt::format("value {} does not fit {}", a.value, dtype_name(x.dtype)));
  return {x.dtype, std::move(s)};
}

}  // namespace

TypeList infer_view(ViewOp op, std::span<const TensorType> in, const Attrs& a) {
  switch (op) {
    case ViewOp::Reshape: return {reshape_rule(in[0], std::get<ReshapeAttrs>(a))};
    case ViewOp::Permute: return {permute_rule(in[0], std::get<PermuteAttrs>(a))};
    case ViewOp::Expand: return {expand_rule(in[0], std::get<ExpandAttrs>(a))};
    case ViewOp::Slice: return {slice_rule(in[0], std::get<SliceAttrs>(a))};
    case ViewOp::Concat: return {concat_rule(in, std::get<ConcatAttrs>(a))};
    case ViewOp::Pad: return {pad_rule(in[0], std::get<PadAttrs>(a))};
  }
  type_fail("unknown view op");
}

}  // namespace lt::ir
