#include "frontend/promotion.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "frontend/dispatch.h"
#include "ir/result_type.h"
#include "lt/ops.h"

namespace lt {
namespace {

PromotionOperand of(const Tensor& t) {
  return {t.dtype(), t.rank() == 0 ? PromotionRank::ZeroDim : PromotionRank::Dim};
}

/// PyTorch's sub_check.
void check_sub(std::span<const Tensor> in, const Loc& loc) {
  const bool a = in[0].dtype() == DType::Bool, b = in[1].dtype() == DType::Bool;
  if (a && b)
    fail_op("sub",
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.",
            in, loc);
  if (a || b)
    fail_op("sub",
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            in, loc);
}

/// Which operands promote together: [first, inputs.size()), or none (first < 0).
int first_promoted(ir::Op op) {
  const ir::OpInfo& row = ir::info(op);
  if (row.family != ir::OpFamily::Elementwise) return -1;
  if (row.operands == ir::OperandKind::Select) return 1;  // where's branches, not its condition
  return row.arity == 2 ? 0 : -1;
}

std::optional<Promoted> promote_reduction(ir::Op op, const Tensor& x, const Loc& loc) {
  if (op == ir::Op::Mean && !is_float(x.dtype()))
    throw Error(fmt::format("mean(): could not infer output dtype. Input dtype must be either a "
                            "floating point or complex dtype. Got: {} at {}",
                            torch_name(x.dtype()), location_str(loc)));
  // PyTorch sums bool and integers in i64.
  if (op == ir::Op::Sum && !is_float(x.dtype()) && x.dtype() != DType::I64)
    return Promoted{{cast(x, DType::I64, loc)}, std::nullopt};
  return std::nullopt;
}

DType wrap_dtype(Scalar s, const Tensor& other) {
  const PromotionOperand in[] = {of(other), {s.dtype(), PromotionRank::Number}};
  return result_type(std::span<const PromotionOperand>(in));
}

}  // namespace

std::optional<Promoted> promote(ir::Op op, std::span<const Tensor> inputs, const Loc& loc) {
  for (const Tensor& x : inputs)
    if (!x.defined()) return std::nullopt;  // the type check names it
  if ((op == ir::Op::Sum || op == ir::Op::Mean) && inputs.size() == 1)
    return promote_reduction(op, inputs[0], loc);
  const int first = first_promoted(op);
  if (first < 0) return std::nullopt;
  const std::span<const Tensor> operands = inputs.subspan(static_cast<size_t>(first));
  if (op == ir::Op::Sub) check_sub(operands, loc);
  std::array<PromotionOperand, 2> ranks{};
  for (size_t i = 0; i < operands.size(); ++i) ranks[i] = of(operands[i]);
  DType common = result_type(std::span(ranks).first(operands.size()));
  if (op == ir::Op::Div && !is_float(common)) common = kDefaultFloat;  // torch.div: true division
  const ir::OpInfo& row = ir::info(op);
  DType compute = common;
  if (!is_compute_type(common)) compute = DType::F32;  // exact widening, rounded once at the end
  else if (common == DType::Bool && row.operands == ir::OperandKind::Numeric) compute = DType::I64;
  if (std::all_of(operands.begin(), operands.end(),
                  [&](const Tensor& x) { return x.dtype() == compute; }))
    return std::nullopt;
  Promoted p;
  p.inputs.assign(inputs.begin(), inputs.end());
  for (size_t i = static_cast<size_t>(first); i < p.inputs.size(); ++i)
    if (p.inputs[i].dtype() != compute) p.inputs[i] = cast(p.inputs[i], compute, loc);
  if (compute != common && row.result == ir::ResultKind::Same) p.round_to = common;
  return p;
}

Tensor wrap_number(Scalar s, const Tensor& other, const Loc& loc) {
  if (!other.defined()) fail_op("scalar", "operand is an undefined tensor", {}, loc);
  return scalar(s.value(), s.dtype() == DType::Bool ? DType::Bool : wrap_dtype(s, other), loc);
}

DType result_type(const Tensor& a, const Tensor& b) {
  const PromotionOperand ops[] = {of(a), of(b)};
  return result_type(std::span<const PromotionOperand>(ops));
}
DType result_type(const Tensor& a, Scalar b) { return wrap_dtype(b, a); }
DType result_type(Scalar a, const Tensor& b) { return wrap_dtype(a, b); }

}  // namespace lt
