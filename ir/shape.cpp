#include "ir/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lt {

bool shape_fits(std::span<const int64_t> shape) {
  int64_t n = 1;  // checked one factor at a time, so it never overflows
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d == 0) continue;
    if (n > kMaxElements / d) return false;
    n *= d;
  }
  return true;
}

int64_t numel(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Dims contiguous_strides(std::span<const int64_t> shape) {
  Dims s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::string shape_str(std::span<const int64_t> shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string type_str(const TensorType& t) {
  return fmt::format("{}{}", dtype_name(t.dtype), shape_str(t.shape));
}

bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  Shape s(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    s[i] = da == 1 ? db : da;
  }
  *out = std::move(s);
  return true;
}

}  // namespace lt
