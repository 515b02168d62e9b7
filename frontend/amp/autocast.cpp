#include "frontend/amp/autocast.h"

#include <fmt/format.h>

#include "frontend/dispatch.h"
#include "ir/error.h"
#include "lt/autocast.h"
#include "lt/ops.h"

namespace lt {
namespace {

thread_local bool t_enabled = false;
thread_local DType t_dtype = DType::BF16;

}  // namespace

AutocastGuard::AutocastGuard(DType dtype, bool enabled, std::source_location loc)
    : prev_enabled_(t_enabled), prev_dtype_(t_dtype) {
  if (enabled && dtype != DType::BF16 && dtype != DType::F16)
    throw InputError(fmt::format("autocast to {}: the lower precision is bf16 or f16, at {}",
                                 dtype_name(dtype), location_str(loc)));
  t_enabled = enabled;
  t_dtype = dtype;
}

AutocastGuard::~AutocastGuard() {
  t_enabled = prev_enabled_;
  t_dtype = prev_dtype_;
}

bool autocast_enabled() { return t_enabled; }
DType autocast_dtype() { return t_dtype; }

namespace amp {

std::optional<std::vector<Tensor>> autocast_apply(ir::Op op, std::span<const Tensor> inputs,
                                                  const ir::Attrs& attrs, const Loc& loc) {
  if (!t_enabled || autocast_policy(op) != AutocastPolicy::LowerPrecision) return std::nullopt;
  bool any_f32 = false;
  for (const Tensor& x : inputs) any_f32 = any_f32 || (x.defined() && x.dtype() == DType::F32);
  if (!any_f32) return std::nullopt;
  const DType low = t_dtype;
  std::vector<Tensor> cast_inputs;
  for (const Tensor& x : inputs)
    cast_inputs.push_back(x.defined() && x.dtype() == DType::F32 ? cast(x, low, loc) : x);
  std::vector<Tensor> out = apply(op, cast_inputs, attrs, loc);  // operands no longer f32
  for (Tensor& y : out)
    if (y.defined() && y.dtype() == low) y = cast(y, DType::F32, loc);
  return out;
}

}  // namespace amp
}  // namespace lt
