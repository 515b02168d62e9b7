// Diagonals: diagonal (a view that writes through, as PyTorch's), diag and trace. No IR op
// takes a diagonal: its value is a permute, a row slice, a flattening reshape and a slice whose
// step is one more than the row length, so a write through it runs those steps backwards.
#include <fmt/format.h>

#include <algorithm>

#include "frontend/dispatch.h"
#include "frontend/views.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

ir::SliceAttrs slice_attrs(const Shape& in, int64_t axis, int64_t start, int64_t stop,
                           int64_t step) {
  ir::SliceAttrs a;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool at = static_cast<int64_t>(i) == axis;
    a.start.push_back(at ? start : 0);
    a.stop.push_back(at ? stop : in[i]);
    a.step.push_back(at ? step : 1);
  }
  return a;
}

}  // namespace

Tensor diagonal(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2, Loc loc) {
  need_defined({&x, 1}, "diagonal", loc);
  const int64_t d1 = wrap_dim(dim1, x.rank(), "diagonal", {&x, 1}, loc);
  const int64_t d2 = wrap_dim(dim2, x.rank(), "diagonal", {&x, 1}, loc);
  if (d1 == d2)
    fail_op("diagonal", fmt::format("diagonal dimensions cannot be identical {}, {}", dim1, dim2),
            {&x, 1}, loc);
  const int64_t n = x.shape()[d1], m = x.shape()[d2];
  const int64_t len =
      std::max<int64_t>(0, offset >= 0 ? std::min(n, m - offset) : std::min(n + offset, m));
  const int64_t row0 = len > 0 ? std::max<int64_t>(-offset, 0) : 0;
  const int64_t col0 = len > 0 ? std::max<int64_t>(offset, 0) : 0;

  // The value's steps: d1 and d2 last (the other dims in order), the rows of the diagonal, the
  // two dims as one, every (m + 1)-th element from the first column.
  std::vector<ViewStep> steps;
  ir::Ints perm;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (i != d1 && i != d2) perm.push_back(i);
  perm.push_back(d1);
  perm.push_back(d2);
  Shape sizes;
  for (int64_t p : perm) sizes.push_back(x.shape()[p]);
  const int64_t r = x.rank();
  steps.push_back({Op::Permute, ir::PermuteAttrs{perm}});
  steps.push_back({Op::Slice, slice_attrs(sizes, r - 2, row0, row0 + len, 1)});
  sizes[r - 2] = len;
  Shape flat(sizes.begin(), sizes.end() - 2);
  flat.push_back(len * m);
  steps.push_back({Op::Reshape, ir::ReshapeAttrs{flat}});
  steps.push_back(
      {Op::Slice, slice_attrs(flat, r - 2, col0, len > 0 ? col0 + (len - 1) * (m + 1) + 1 : 0,
                              m + 1)});
  Tensor out = x;
  for (const ViewStep& s : steps) out = apply1(s.op, {&out, 1}, s.attrs, loc);

  const Shape xs = strides_of(*x.impl());
  Shape strides;
  for (int64_t i = 0; i < r; ++i)
    if (i != d1 && i != d2) strides.push_back(xs[i]);
  strides.push_back(xs[d1] + xs[d2]);
  const int64_t start = len == 0 ? 0 : offset >= 0 ? offset * xs[d2] : -offset * xs[d1];
  link_view_steps(x, out, std::move(steps), std::move(strides), start);
  return out;
}

Tensor diag(const Tensor& x, int64_t offset, Loc loc) {
  need_defined({&x, 1}, "diag", loc);
  if (x.rank() == 2) return clone(diagonal(x, offset, 0, 1, loc), loc);
  if (x.rank() != 1) fail_op("diag", "matrix or a vector expected", {&x, 1}, loc);
  const int64_t n = x.shape()[0] + (offset < 0 ? -offset : offset);
  Tensor out = zeros({n, n}, x.dtype(), loc);
  diagonal(out, offset, 0, 1, loc).copy_(x, loc);
  return out;
}

Tensor trace(const Tensor& x, Loc loc) {
  need_defined({&x, 1}, "trace", loc);
  if (x.rank() != 2)
    fail_op("trace", fmt::format("expected a matrix, but got tensor with dim {}", x.rank()),
            {&x, 1}, loc);
  return sum(diagonal(x, 0, 0, 1, loc), {}, false, loc);
}

}  // namespace lt
