#include "ir/type_rules.h"

#include <fmt/format.h>

#include <cstdint>

#include "ir/error.h"

namespace lt::ir {

void type_fail(std::string msg) { throw TypeError(std::move(msg)); }

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return a > 0 ? INT64_MAX : INT64_MIN;
}

int64_t saturating_mul(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return (a > 0) == (b > 0) ? INT64_MAX : INT64_MIN;
}

namespace {

TypeList infer_family(Op op, std::span<const TensorType> in, const Attrs& attrs) {
  const OpInfo& oi = info(op);
  if (oi.arity == kVariadic) {
    if (in.empty()) type_fail("expects at least one operand");
  } else if (static_cast<int>(in.size()) != oi.arity) {
    type_fail(fmt::format("expects {} operands, got {}", oi.arity, in.size()));
  }
  if (attrs.index() != oi.attrs_index) type_fail("wrong attribute kind");
  switch (oi.family) {
    case OpFamily::Elementwise: return infer_elementwise(*as_elementwise(op), in, attrs);
    case OpFamily::Reduce:
      return infer_reduce(*as_reduce(op), in, std::get<ReduceAttrs>(attrs));
    case OpFamily::View: return infer_view(*as_view(op), in, attrs);
    case OpFamily::Library: return infer_library(*as_library(op), in, attrs);
    case OpFamily::Nn: return infer_nn(*as_nn(op), in, attrs);
    case OpFamily::Creation: return infer_creation(*as_creation(op), in, attrs);
    case OpFamily::Collective: return infer_collective(*as_collective(op), in, attrs);
  }
  LT_UNREACHABLE();
}

}  // namespace

TypeList infer_types(Op op, std::span<const TensorType> in, const Attrs& attrs) {
  TypeList out = infer_family(op, in, attrs);
  for (const TensorType& t : out)
    if (!shape_fits(t.shape))
      type_fail(fmt::format("result shape {} is negative or past {} elements", shape_str(t.shape),
                            kMaxElements));
  return out;
}

}  // namespace lt::ir
