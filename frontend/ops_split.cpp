// Ops that cut a tensor into pieces along a dim or put pieces together: stack, split, chunk,
// unbind, narrow, select and roll, composed of slice, concat and reshape (views a compiled step
// folds into index maps). Arguments are PyTorch's, and so are the errors of bad ones.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "frontend/dispatch.h"
#include "frontend/wrap_dim.h"
#include "lt/ops.h"

namespace lt {

namespace {

std::string sizes_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

}  // namespace

Tensor stack(std::span<const Tensor> xs, int64_t dim, Loc loc) {
  if (xs.empty()) fail_op("stack", "expects a non-empty TensorList", xs, loc);
  need_defined(xs, "stack", loc);
  for (size_t i = 1; i < xs.size(); ++i)
    if (xs[i].shape() != xs[0].shape())
      fail_op("stack",
              fmt::format("expects each tensor to be equal size, but got {} at entry 0 and {} "
                          "at entry {}",
                          sizes_str(xs[0].shape()), sizes_str(xs[i].shape()), i),
              xs, loc);
  const int64_t axis = wrap_dim(dim, xs[0].rank() + 1, "stack", xs, loc);
  std::vector<Tensor> parts;
  for (const Tensor& x : xs) parts.push_back(unsqueeze(x, axis, loc));
  return concat(parts, axis, loc);
}
Tensor stack(std::initializer_list<Tensor> xs, int64_t dim, Loc loc) {
  return stack(std::span<const Tensor>(xs.begin(), xs.size()), dim, loc);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim, Loc loc) {
  need_defined({&x, 1}, "split", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "split", {&x, 1}, loc);
  if (x.rank() == 0) fail_op("split", "expects at least a 1-dimensional tensor", {&x, 1}, loc);
  const int64_t n = x.shape()[axis];
  if (split_size < 0)
    fail_op("split",
            fmt::format("expects split_size be non-negative, but got split_size={}", split_size),
            {&x, 1}, loc);
  if (split_size == 0 && n != 0)
    fail_op("split",
            fmt::format("split_size can only be 0 if dimension size is 0, but got dimension size "
                        "of {}",
                        n),
            {&x, 1}, loc);
  std::vector<Tensor> out;
  for (int64_t start = 0; start < n; start += split_size)
    out.push_back(slice(x, axis, start, std::min(n, start + split_size), 1, loc));
  if (out.empty()) out.push_back(x);  // an empty dim splits into itself
  return out;
}

std::vector<Tensor> split_with_sizes(const Tensor& x, Dims split_sizes, int64_t dim, Loc loc) {
  need_defined({&x, 1}, "split_with_sizes", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "split_with_sizes", {&x, 1}, loc);
  if (x.rank() == 0)
    fail_op("split_with_sizes", "expects at least a 1-dimensional tensor", {&x, 1}, loc);
  const int64_t n = x.shape()[axis];
  const auto list = [&] { return fmt::format("[{}]", fmt::join(split_sizes, ", ")); };
  if (std::any_of(split_sizes.begin(), split_sizes.end(), [](int64_t s) { return s < 0; }))
    fail_op("split_with_sizes",
            fmt::format("expects split_sizes have only non-negative entries, but got "
                        "split_sizes={}",
                        list()),
            {&x, 1}, loc);
  if (std::accumulate(split_sizes.begin(), split_sizes.end(), int64_t{0}) != n)
    fail_op("split_with_sizes",
            fmt::format("expects split_sizes to sum exactly to {} (input tensor's size at "
                        "dimension {}), but got split_sizes={}",
                        n, axis, list()),
            {&x, 1}, loc);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(slice(x, axis, start, start + s, 1, loc));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, Dims split_sizes, int64_t dim, Loc loc) {
  return split_with_sizes(x, std::move(split_sizes), dim, loc);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim, Loc loc) {
  need_defined({&x, 1}, "chunk", loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "chunk", {&x, 1}, loc);
  if (x.rank() == 0) fail_op("chunk", "expects at least a 1-dimensional tensor", {&x, 1}, loc);
  if (chunks <= 0)
    fail_op("chunk", fmt::format("expects `chunks` to be greater than 0, got: {}", chunks),
            {&x, 1}, loc);
  const int64_t n = x.shape()[axis];
  // An empty dim gives `chunks` empty pieces, as PyTorch's chunk does (its split gives one).
  if (n == 0) return std::vector<Tensor>(static_cast<size_t>(chunks), x);
  return split(x, (n + chunks - 1) / chunks, axis, loc);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim, Loc loc) {
  need_defined({&x, 1}, "unbind", loc);
  if (x.rank() == 0)
    fail_op("unbind", "Dimension specified as 0 but tensor has no dimensions", {&x, 1}, loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "unbind", {&x, 1}, loc);
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.shape()[axis]; ++i) out.push_back(select(x, axis, i, loc));
  return out;
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length, Loc loc) {
  need_defined({&x, 1}, "narrow", loc);
  if (x.rank() == 0)
    fail_op("narrow", "narrow() cannot be applied to a 0-dim tensor.", {&x, 1}, loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "narrow", {&x, 1}, loc);
  const int64_t n = x.shape()[axis];
  if (start < -n || start > n)
    fail_op("narrow",
            fmt::format("start out of range (expected to be in range of [{}, {}], but got {})", -n,
                        n, start),
            {&x, 1}, loc);
  if (start < 0) start += n;
  if (length < 0) fail_op("narrow", "length must be non-negative.", {&x, 1}, loc);
  if (start > n - length)
    fail_op("narrow",
            fmt::format("start ({}) + length ({}) exceeds dimension size ({}).", start, length, n),
            {&x, 1}, loc);
  return slice(x, axis, start, start + length, 1, loc);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index, Loc loc) {
  need_defined({&x, 1}, "select", loc);
  if (x.rank() == 0) fail_op("select", "cannot be applied to a 0-dim tensor.", {&x, 1}, loc);
  const int64_t axis = wrap_dim(dim, x.rank(), "select", {&x, 1}, loc);
  const int64_t n = x.shape()[axis];
  if (index < -n || index >= n)
    fail_op("select",
            fmt::format("index {} out of range for tensor of size {} at dimension {}", index,
                        sizes_str(x.shape()), axis),
            {&x, 1}, loc);
  if (index < 0) index += n;
  return squeeze(slice(x, axis, index, index + 1, 1, loc), axis, loc);
}

Tensor roll(const Tensor& x, Dims shifts, Dims dims, Loc loc) {
  need_defined({&x, 1}, "roll", loc);
  if (shifts.empty()) fail_op("roll", "`shifts` required", {&x, 1}, loc);
  if (dims.empty() && shifts.size() == 1)  // the flattened tensor, shape restored
    return reshape(roll(flatten(x, 0, -1, loc), shifts, {0}, loc), x.shape(), loc);
  if (shifts.size() != dims.size())
    fail_op("roll",
            fmt::format("shifts and dimensions must align. shifts: {}, dims:{}", shifts.size(),
                        dims.size()),
            {&x, 1}, loc);
  Tensor y = x;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t axis = wrap_dim(dims[k], x.rank(), "roll", {&x, 1}, loc);
    const int64_t n = x.rank() == 0 ? 1 : x.shape()[axis];
    if (n == 0) continue;
    const int64_t s = ((shifts[k] % n) + n) % n;  // element i moves to (i + s) mod n
    if (s == 0) continue;
    y = concat({slice(y, axis, n - s, n, 1, loc), slice(y, axis, 0, n - s, 1, loc)}, axis, loc);
  }
  return y;
}
Tensor roll(const Tensor& x, int64_t shift, Loc loc) { return roll(x, Dims{shift}, {}, loc); }
Tensor roll(const Tensor& x, int64_t shift, int64_t dim, Loc loc) {
  return roll(x, Dims{shift}, Dims{dim}, loc);
}

}  // namespace lt
