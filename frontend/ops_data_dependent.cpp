// Ops whose result's shape depends on values: nonzero, masked_select, indexing by a mask,
// unique. They read the values that decide the shape (in lazy mode a sync, counted under the
// op's name and the caller's line) and express the rest as ordinary ops on those positions, so
// the selected values keep their autograd history and, in lazy mode, stay in the graph: only
// the mask is computed early, and a graph made from a selection recompiles when its size changes.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "frontend/dispatch.h"
#include "frontend/lazy/tracer.h"
#include "frontend/wrap_dim.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt {

namespace {

std::string sizes_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

/// x's values as bools, computed now (a sync in lazy mode, counted as `op`).
std::vector<bool> truth(const Tensor& x, const char* op, const Loc& loc) {
  lazy::sync(x, op, loc);
  ModeGuard eager(Mode::Eager);
  NoGradGuard no_grad;
  const Tensor t = x.dtype() == DType::Bool ? x : ne(x, zeros({}, x.dtype(), loc), loc);
  return t.to_vector<bool>(loc);
}

/// The row-major positions of the true elements.
std::vector<int64_t> true_positions(const std::vector<bool>& t) {
  std::vector<int64_t> p;
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i]) p.push_back(static_cast<int64_t>(i));
  return p;
}

Tensor positions_tensor(std::vector<int64_t> p, const Loc& loc) {
  const int64_t n = static_cast<int64_t>(p.size());
  return from_vector(p, {n}, loc);
}

/// The dims of x that one tensor index addresses, as [selected, rest...] positions: the mask's
/// true elements or the integer index's entries.
struct Selection {
  Tensor rows;     // int64 positions into x reshaped to [lead, rest...]
  int64_t lead;    // how many positions the index addresses
  Shape selected;  // the shape of the selection's leading dims
};

Selection select_rows(const Tensor& x, const Tensor& index, const char* op, const Loc& loc) {
  if (index.dtype() == DType::Bool) {
    const Tensor ops[] = {x, index};
    const int64_t k = index.rank();
    if (k > x.rank())
      fail_op(op, fmt::format("too many indices for tensor of dimension {} (got {})", x.rank(), k),
              ops, loc);
    for (int64_t i = 0; i < k; ++i)
      if (index.shape()[i] != x.shape()[i])
        fail_op(op,
                fmt::format("The shape of the mask {} at index {} does not match the shape of "
                            "the indexed tensor {} at index {}",
                            sizes_str(index.shape()), i, sizes_str(x.shape()), i),
                ops, loc);
    std::vector<int64_t> p = true_positions(truth(index, op, loc));
    const int64_t n = static_cast<int64_t>(p.size());
    return {positions_tensor(std::move(p), loc), index.numel(), {n}};
  }
  if (index.dtype() != DType::I64 && index.dtype() != DType::I32)
    fail_op(op, "tensors used as indices must be long, int or bool tensors",
            std::vector<Tensor>{x, index}, loc);
  if (x.rank() == 0)
    fail_op(op, "invalid index of a 0-dim tensor", std::vector<Tensor>{x, index}, loc);
  // Negative entries count from the end, as PyTorch's indexing.
  const int64_t d0 = x.shape()[0];
  Tensor flat = reshape(index, {index.numel()}, loc);
  flat = where(lt::lt(flat, zeros({}, flat.dtype(), loc), loc), flat + Scalar(d0), flat, loc);
  return {flat, d0, index.shape()};
}

}  // namespace

Tensor nonzero(const Tensor& x, Loc loc) {
  need_defined({&x, 1}, "nonzero", loc);
  const std::vector<int64_t> p = true_positions(truth(x, "nonzero", loc));
  const int64_t n = static_cast<int64_t>(p.size()), r = x.rank();
  std::vector<int64_t> coords;
  coords.reserve(static_cast<size_t>(n * r));
  for (int64_t flat : p) {
    const size_t at = coords.size();
    coords.resize(at + static_cast<size_t>(r));
    for (int64_t d = r - 1; d >= 0; --d) {
      coords[at + static_cast<size_t>(d)] = flat % x.shape()[d];
      flat /= x.shape()[d];
    }
  }
  return from_vector(coords, {n, r}, loc);
}

Tensor masked_select(const Tensor& x, const Tensor& mask, Loc loc) {
  const Tensor ops[] = {x, mask};
  need_defined(ops, "masked_select", loc);
  if (mask.dtype() != DType::Bool)
    fail_op("masked_select", "expected BoolTensor for mask", ops, loc);
  Shape s;
  if (!broadcast_shapes(x.shape(), mask.shape(), &s))
    fail_op("masked_select",
            fmt::format("the shapes {} and {} do not broadcast", sizes_str(x.shape()),
                        sizes_str(mask.shape())),
            ops, loc);
  const Tensor xs = s == x.shape() ? x : expand(x, s, loc);
  const Tensor ms = s == mask.shape() ? mask : expand(mask, s, loc);
  const Tensor at = positions_tensor(true_positions(truth(ms, "masked_select", loc)), loc);
  return index_select(reshape(xs, {numel(s)}, loc), 0, at, loc);
}

Tensor index(const Tensor& x, const Tensor& index, Loc loc) {
  const Tensor ops[] = {x, index};
  need_defined(ops, "index", loc);
  Selection sel = select_rows(x, index, "index", loc);
  const int64_t k = index.dtype() == DType::Bool ? index.rank() : 1;
  Shape lead{sel.lead};
  lead.insert(lead.end(), x.shape().begin() + k, x.shape().end());
  Tensor picked = index_select(reshape(x, lead, loc), 0, sel.rows, loc);
  Shape out = sel.selected;
  out.insert(out.end(), x.shape().begin() + k, x.shape().end());
  return out == picked.shape() ? picked : reshape(picked, out, loc);
}

Tensor index_put(const Tensor& x, const Tensor& index, const Tensor& values, bool accumulate,
                 Loc loc) {
  const Tensor ops[] = {x, index, values};
  need_defined(ops, "index_put", loc);
  Selection sel = select_rows(x, index, "index_put", loc);
  const int64_t k = index.dtype() == DType::Bool ? index.rank() : 1;
  Shape rest(x.shape().begin() + k, x.shape().end());
  Shape lead{sel.lead}, picked{sel.rows.numel()}, target = sel.selected;
  lead.insert(lead.end(), rest.begin(), rest.end());
  picked.insert(picked.end(), rest.begin(), rest.end());
  target.insert(target.end(), rest.begin(), rest.end());
  // values broadcast to the selection's shape, as PyTorch's x[index] = values.
  Shape b;
  if (!broadcast_shapes(values.shape(), target, &b) || b != target)
    fail_op("index_put",
            fmt::format("shape mismatch: value tensor of shape {} cannot be broadcast to "
                        "indexing result of shape {}",
                        sizes_str(values.shape()), sizes_str(target)),
            ops, loc);
  Tensor v = cast(values, x.dtype(), loc);
  v = reshape(values.shape() == target ? v : expand(v, target, loc), picked, loc);
  Shape column(picked.size(), 1);
  column[0] = sel.rows.numel();
  const Tensor rows = expand(reshape(sel.rows, column, loc), picked, loc);
  Tensor flat = reshape(x, lead, loc);
  Tensor out = accumulate ? scatter_add(flat, 0, rows, v, loc) : scatter(flat, 0, rows, v, loc);
  return reshape(out, x.shape(), loc);
}

Unique unique(const Tensor& x, bool sorted, bool return_inverse, bool return_counts, Loc loc) {
  (void)sorted;  // sorted either way: PyTorch leaves the unsorted order unspecified
  need_defined({&x, 1}, "unique", loc);
  lazy::sync(x, "unique", loc);
  ModeGuard eager(Mode::Eager);
  const int64_t n = x.numel();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::vector<int64_t> inverse(static_cast<size_t>(n)), counts;
  Tensor values;
  // Integers compare exactly as int64; floats as double (every float dtype converts exactly).
  // NaN sorts last, and no NaN equals another.
  const auto run = [&](auto v) {
    using T = typename decltype(v)::value_type;
    const auto less = [&](int64_t a, int64_t b) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(v[a])) return false;
        if (std::isnan(v[b])) return true;
      }
      return v[a] < v[b];
    };
    std::stable_sort(order.begin(), order.end(), less);
    std::vector<T> out;
    for (int64_t i : order) {
      if (out.empty() || !(out.back() == v[i])) {
        out.push_back(v[i]);
        counts.push_back(0);
      }
      ++counts.back();
      inverse[static_cast<size_t>(i)] = static_cast<int64_t>(out.size()) - 1;
    }
    const int64_t m = static_cast<int64_t>(out.size());
    values = cast(from_vector(out, {m}, loc), x.dtype(), loc);
  };
  NoGradGuard no_grad;
  if (is_float(x.dtype())) run(x.to_vector<double>(loc));
  else run(x.to_vector<int64_t>(loc));
  Unique u{values, {}, {}};
  if (return_inverse) u.inverse = from_vector(inverse, x.shape(), loc);
  if (return_counts) {
    const int64_t m = static_cast<int64_t>(counts.size());
    u.counts = from_vector(counts, {m}, loc);
  }
  return u;
}

Tensor& Tensor::index_put_(const Tensor& index, const Tensor& values, bool accumulate, Loc loc) {
  return rebind(index_put(*this, index, values, accumulate, loc), "index_put_", loc);
}

}  // namespace lt
