// Gather, scatter and scatter_add (nn family): (x, index i64[, src]) along one axis, in
// PyTorch's terms and with its messages.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/type_rules.h"

namespace lt::ir {
namespace {

std::string sizes(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

bool within(const Shape& index, const Shape& of, int64_t skip) {
  for (size_t d = 0; d < index.size(); ++d)
    if (static_cast<int64_t>(d) != skip && index[d] > of[d]) return false;
  return true;
}

}  // namespace

TypeList infer_gather(NnOp op, std::span<const TensorType> in, int64_t axis) {
  const TensorType &x = in[0], &index = in[1];
  if (!is_compute_type(x.dtype) || (op == NnOp::ScatterAdd && x.dtype == DType::Bool))
    type_fail(fmt::format("does not take {}", type_str(x)));
  if (axis < 0 || axis >= x.rank())
    type_fail(fmt::format("axis {} out of range for {}", axis, type_str(x)));
  if (index.dtype != DType::I64) type_fail("Expected dtype int64 for index");
  if (op == NnOp::Gather) {
    if (index.rank() != x.rank())
      type_fail("Index tensor must have the same number of dimensions as input tensor");
    for (int64_t d = 0; d < x.rank(); ++d)
      if (d != axis && index.shape[d] > x.shape[d])
        type_fail(fmt::format("Size does not match at dimension {} expected index {} to be "
                              "smaller than self {} apart from dimension {}",
                              d, sizes(index.shape), sizes(x.shape), axis));
    return {{x.dtype, index.shape}};
  }
  const TensorType& src = in[2];
  if (src.dtype != x.dtype) type_fail("Expected self.dtype to be equal to src.dtype");
  if (index.rank() != x.rank())
    type_fail("Index tensor must have the same number of dimensions as self tensor");
  if (src.rank() != x.rank())
    type_fail("Index tensor must have the same number of dimensions as src tensor");
  if (!within(index.shape, x.shape, axis) || !within(index.shape, src.shape, -1))
    type_fail(fmt::format("Expected index {} to be smaller than self {} apart from dimension {} "
                          "and to be smaller size than src {}",
                          sizes(index.shape), sizes(x.shape), axis, sizes(src.shape)));
  return {x};
}

}  // namespace lt::ir
