// The ops that take positions along a dim: gather, scatter and scatter_add are rows;
// index_select, index_add, sort and argsort, flip, tril and triu are composed of them and of
// elementwise rows. Arguments are PyTorch's, and so are the errors of bad ones.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "frontend/dispatch.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

std::string sizes_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

/// A row over (x, index[, src]) along dim; a 0-d x and index act as 1-d of one element, as in
/// PyTorch.
Tensor along(Op op, std::span<const Tensor> in, int64_t dim, const Loc& loc) {
  const std::string_view name = ir::mnemonic(op);
  need_defined(in, name, loc);
  const int64_t axis = wrap_dim(dim, in[0].rank(), name, in, loc);
  if (std::all_of(in.begin(), in.end(), [](const Tensor& t) { return t.rank() == 0; })) {
    std::vector<Tensor> flat;
    for (const Tensor& t : in) flat.push_back(reshape(t, {1}, loc));
    return reshape(apply1(op, flat, ir::AxisAttrs{0}, loc), {}, loc);
  }
  return apply1(op, in, ir::AxisAttrs{axis}, loc);
}

/// index_select's and index_add's index: 1-d (or 0-d), int32 or int64.
void check_vector_index(const Tensor& index, std::string_view op,
                        std::span<const Tensor> operands, const Loc& loc) {
  if (index.dtype() != DType::I64 && index.dtype() != DType::I32)
    fail_op(op, "Expected dtype int32 or int64 for index", operands, loc);
  if (index.rank() > 1) fail_op(op, "Index is supposed to be a vector", operands, loc);
}

/// The vector index as i64 of `shape` but for its length along axis: the same values along the
/// axis in every other coordinate, the index gather and scatter_add take.
Tensor index_along(const Tensor& index, int64_t axis, Shape shape, const Loc& loc) {
  const Tensor i64 = index.dtype() == DType::I64 ? index : cast(index, DType::I64, loc);
  Shape line(shape.size(), 1);
  line[axis] = index.numel();
  shape[axis] = index.numel();
  return expand(reshape(i64, line, loc), shape, loc);
}

/// tril (lower) or triu: x where column - row <= diagonal (>= for triu), else 0.
Tensor band(const Tensor& x, int64_t diagonal, bool lower, std::string_view op, const Loc& loc) {
  need_defined({&x, 1}, op, loc);
  if (x.rank() < 2) fail_op(op, "input tensor must have at least 2 dimensions", {&x, 1}, loc);
  const int64_t rows = x.size(-2), cols = x.size(-1);
  const auto positions = [&](int64_t n, Shape s) {
    return reshape(arange(0, static_cast<double>(n), 1, DType::I64, loc), std::move(s), loc);
  };
  const Tensor i = positions(rows, {rows, 1}), j = positions(cols, {1, cols});
  const Tensor offset = sub(j, i, loc);
  const Tensor d = scalar_like(static_cast<double>(diagonal), offset, loc);
  // A zero of x's own dtype: a number 0.0 would promote a bool or integer x to float.
  return where(lower ? le(offset, d, loc) : ge(offset, d, loc), x, scalar_like(0, x, loc), loc);
}

}  // namespace

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, Loc loc) {
  const Tensor in[] = {x, index};
  return along(Op::Gather, in, dim, loc);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, Loc loc) {
  const Tensor in[] = {x, index, src};
  return along(Op::Scatter, in, dim, loc);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value, Loc loc) {
  const Tensor operands[] = {x, index};
  need_defined(operands, "scatter", loc);
  return scatter(x, dim, index, expand(scalar_like(value, x, loc), index.shape(), loc), loc);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                   Loc loc) {
  const Tensor in[] = {x, index, src};
  return along(Op::ScatterAdd, in, dim, loc);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index, Loc loc) {
  const Tensor operands[] = {x, index};
  need_defined(operands, "index_select", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "index_select", operands, loc);
  check_vector_index(index, "index_select", operands, loc);
  if (x.rank() == 0) return reshape(index_select(reshape(x, {1}, loc), 0, index, loc), {}, loc);
  return gather(x, axis, index_along(index, axis, x.shape(), loc), loc);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                 double alpha, Loc loc) {
  const Tensor operands[] = {x, index, src};
  need_defined(operands, "index_add", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "index_add", operands, loc);
  check_vector_index(index, "index_add", operands, loc);
  if (src.dtype() != x.dtype())
    fail_op("index_add",
            fmt::format("self ({}) and source ({}) must have the same scalar type",
                        dtype_name(x.dtype()), dtype_name(src.dtype())),
            operands, loc);
  if (x.rank() == 0)
    return reshape(index_add(reshape(x, {1}, loc), 0, index, reshape(src, {-1}, loc), alpha, loc),
                   {}, loc);
  if (src.rank() == x.rank() && src.shape()[axis] != index.numel())
    fail_op("index_add",
            fmt::format("Number of indices ({}) should be equal to source.size(dim): ({}), for "
                        "dim: {}",
                        index.numel(), src.shape()[axis], axis),
            operands, loc);
  Shape want = x.shape();
  want[axis] = index.numel();
  if (src.shape() != want)
    fail_op("index_add",
            fmt::format("source {} must have self's sizes {} apart from dimension {}",
                        sizes_str(src.shape()), sizes_str(x.shape()), axis),
            operands, loc);
  const Tensor scaled = alpha == 1 ? src : mul(src, scalar_like(alpha, src, loc), loc);
  return scatter_add(x, axis, index_along(index, axis, want, loc), scaled, loc);
}

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending, Loc loc) {
  need_defined({&x, 1}, "sort", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "sort", {&x, 1}, loc);
  if (x.rank() == 0) return {x, zeros({}, DType::I64, loc)};
  // topk of every element is a stable sort (equal values in index order, NaN above every
  // number); bool orders as its integers. The values are gathered so the gradient reaches x.
  const Tensor keys = x.dtype() == DType::Bool ? cast(x, DType::I32, loc) : x;
  Tensor indices = topk(keys, x.shape()[axis], axis, descending, true, loc).indices;
  Tensor values = gather(x, axis, indices, loc);
  return {std::move(values), std::move(indices)};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, Loc loc) {
  return sort(x, dim, descending, loc).indices;
}

Tensor flip(const Tensor& x, Axes dims, Loc loc) {
  need_defined({&x, 1}, "flip", loc);
  for (int64_t& d : dims) d = wrap_dim(d, x.rank(), "flip", {&x, 1}, loc);
  Axes sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  if (auto dup = std::adjacent_find(sorted.begin(), sorted.end()); dup != sorted.end())
    fail_op("flip", fmt::format("dim {} appears multiple times in the list of dims", *dup),
            {&x, 1}, loc);
  Tensor y = x;
  for (int64_t d : sorted) {
    const int64_t n = x.rank() == 0 ? 1 : x.shape()[d];
    if (n < 2) continue;
    const double last = static_cast<double>(n - 1);
    y = index_select(y, d, arange(last, -1, -1, DType::I64, loc), loc);
  }
  return y;
}

Tensor tril(const Tensor& x, int64_t diagonal, Loc loc) {
  return band(x, diagonal, true, "tril", loc);
}
Tensor triu(const Tensor& x, int64_t diagonal, Loc loc) {
  return band(x, diagonal, false, "triu", loc);
}

// --- in place ----------------------------------------------------------------------------------

Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, const Tensor& src, Loc loc) {
  return rebind(scatter(*this, dim, index, src, loc), "scatter_", loc);
}
Tensor& Tensor::scatter_(int64_t dim, const Tensor& index, double value, Loc loc) {
  return rebind(scatter(*this, dim, index, value, loc), "scatter_", loc);
}
Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src, Loc loc) {
  return rebind(scatter_add(*this, dim, index, src, loc), "scatter_add_", loc);
}
Tensor& Tensor::index_add_(int64_t dim, const Tensor& index, const Tensor& src, double alpha,
                           Loc loc) {
  return rebind(index_add(*this, dim, index, src, alpha, loc), "index_add_", loc);
}
Tensor& Tensor::tril_(int64_t diagonal, Loc loc) {
  return rebind(tril(*this, diagonal, loc), "tril_", loc);
}
Tensor& Tensor::triu_(int64_t diagonal, Loc loc) {
  return rebind(triu(*this, diagonal, loc), "triu_", loc);
}

}  // namespace lt
