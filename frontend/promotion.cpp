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

/// PyTorch's neg and relu refuse bool where the type rule would only name the dtype.
void check_unary_bool(ir::Op op, const Tensor& x, const Loc& loc) {
  if (x.dtype() != DType::Bool) return;
  if (op == ir::Op::Neg)
    fail_op("neg",
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead.",
            {&x, 1}, loc);
  if (op == ir::Op::Relu) fail_op("relu", "Boolean inputs not supported for relu", {&x, 1}, loc);
}

/// PyTorch's refusal of a float operand where a row takes integers and bool only (bitwise).
void check_integral(ir::Op op, DType t, std::span<const Tensor> operands, const Loc& loc) {
  if (ir::info(op).operands == ir::OperandKind::Integral && is_float(t))
    fail_op(ir::mnemonic(op),
            fmt::format("\"{}_cpu\" not implemented for '{}'", ir::mnemonic(op), torch_name(t)),
            operands, loc);
}

/// PyTorch's unary ops on one operand: the float-only rows read an integer or bool operand as
/// kDefaultFloat (torch.exp(ids) is f32), except the activations PyTorch implements for floats
/// only, which the type rule refuses; f16 and bf16 compute in f32 and round once, as the binary
/// rows do.
std::optional<Promoted> promote_unary(ir::Op op, const Tensor& x, const Loc& loc) {
  const ir::OpInfo& row = ir::info(op);
  check_unary_bool(op, x, loc);
  const bool float_only_activation =
      op == ir::Op::Gelu || op == ir::Op::GeluErf || op == ir::Op::GeluErfGrad;
  check_integral(op, x.dtype(), {&x, 1}, loc);
  DType compute = x.dtype();
  if (row.operands == ir::OperandKind::Float && !is_float(x.dtype()) && !float_only_activation)
    compute = kDefaultFloat;
  // A test of bool values (isfinite) reads them as integers; arithmetic on bool is refused.
  if (row.operands == ir::OperandKind::Numeric && x.dtype() == DType::Bool &&
      row.result == ir::ResultKind::Bool)
    compute = DType::I64;
  if (!is_compute_type(compute)) compute = DType::F32;  // exact widening, rounded once at the end
  if (compute == x.dtype()) return std::nullopt;
  Promoted p{{cast(x, compute, loc)}, std::nullopt};
  if (is_float(x.dtype()) && row.result == ir::ResultKind::Same) p.round_to = x.dtype();
  return p;
}

/// torch.cat: every operand in the common dtype of all of them (none is 0-d: concat refuses).
std::optional<Promoted> promote_concat(std::span<const Tensor> inputs, const Loc& loc) {
  std::vector<PromotionOperand> ranks;
  for (const Tensor& x : inputs) ranks.push_back({x.dtype(), PromotionRank::Dim});
  const DType common = result_type(std::span<const PromotionOperand>(ranks));
  if (std::all_of(inputs.begin(), inputs.end(),
                  [&](const Tensor& x) { return x.dtype() == common; }))
    return std::nullopt;
  Promoted p;
  for (const Tensor& x : inputs) p.inputs.push_back(x.dtype() == common ? x : cast(x, common, loc));
  return p;
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
  // PyTorch sums and multiplies bool and integers in i64.
  const bool widens_integers = op == ir::Op::Sum || op == ir::Op::Prod;
  if (widens_integers && !is_float(x.dtype()) && x.dtype() != DType::I64)
    return Promoted{{cast(x, DType::I64, loc)}, std::nullopt};
  // f16 and bf16 reduce in f32 and round once, as PyTorch's CPU reductions accumulate them.
  if (is_float(x.dtype()) && !is_compute_type(x.dtype())) {
    Promoted p{{cast(x, DType::F32, loc)}, std::nullopt};
    if (ir::info(op).result == ir::ResultKind::Same) p.round_to = x.dtype();
    return p;
  }
  return std::nullopt;
}

bool is_reduction(ir::Op op) { return ir::info(op).family == ir::OpFamily::Reduce; }

DType wrap_dtype(Scalar s, const Tensor& other) {
  const PromotionOperand in[] = {of(other), {s.dtype(), PromotionRank::Number}};
  return result_type(std::span<const PromotionOperand>(in));
}

}  // namespace

std::optional<Promoted> promote(ir::Op op, std::span<const Tensor> inputs, const Loc& loc) {
  for (const Tensor& x : inputs)
    if (!x.defined()) return std::nullopt;  // the type check names it
  if (is_reduction(op) && inputs.size() == 1) return promote_reduction(op, inputs[0], loc);
  if (op == ir::Op::Concat) return promote_concat(inputs, loc);
  const ir::OpInfo& unary = ir::info(op);
  if (unary.family == ir::OpFamily::Elementwise && unary.arity == 1 &&
      unary.result != ir::ResultKind::Attr)
    return promote_unary(op, inputs[0], loc);
  const int first = first_promoted(op);
  if (first < 0) return std::nullopt;
  const std::span<const Tensor> operands = inputs.subspan(static_cast<size_t>(first));
  if (op == ir::Op::Sub) check_sub(operands, loc);
  std::array<PromotionOperand, 2> ranks{};
  for (size_t i = 0; i < operands.size(); ++i) ranks[i] = of(operands[i]);
  DType common = result_type(std::span(ranks).first(operands.size()));
  if (op == ir::Op::Div && !is_float(common)) common = kDefaultFloat;  // torch.div: true division
  // PyTorch has no bool kernel for these (add and mul of bools are logical or and and).
  const bool arithmetic_only = op == ir::Op::Pow || op == ir::Op::Fmod ||
                               op == ir::Op::Remainder || op == ir::Op::FloorDivide;
  if (common == DType::Bool && arithmetic_only)
    fail_op(ir::mnemonic(op), "does not take bool operands", operands, loc);
  const ir::OpInfo& row = ir::info(op);
  check_integral(op, common, operands, loc);
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
