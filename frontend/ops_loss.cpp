// Classification losses, PyTorch's semantics. cross_entropy's default (mean over rows, no class
// weight) is the fused cross_entropy row; a class weight or another reduction composes
// log_softmax and nll_loss, which is itself composed of rows (one_hot, mul, sum), so both
// differentiate through autograd as written.
#include <fmt/format.h>

#include "frontend/dispatch.h"
#include "lt/ops.h"

namespace lt {

using ir::Op;

namespace {

enum class Reduction { None, Sum, Mean };

Reduction parse_reduction(const std::string& r, std::string_view op,
                          std::span<const Tensor> operands, const Loc& loc) {
  if (r == "none") return Reduction::None;
  if (r == "sum") return Reduction::Sum;
  if (r == "mean") return Reduction::Mean;
  fail_op(op, fmt::format("reduction must be \"none\", \"sum\" or \"mean\", got \"{}\"", r),
          operands, loc);
}

/// Checks (x [N,C] float, labels [N] integer, weight undefined or [C] of x's dtype).
void check_operands(std::string_view op, const Tensor& x, const Tensor& labels,
                    const Tensor& weight, const Loc& loc) {
  const Tensor all[] = {x, labels, weight};
  const std::span<const Tensor> operands(all, weight.defined() ? 3 : 2);
  for (const Tensor& t : operands)
    if (!t.defined()) fail_op(op, "operand is an undefined tensor", operands, loc);
  if (x.rank() != 2 || labels.rank() != 1 || labels.shape()[0] != x.shape()[0] ||
      !is_float(x.dtype()) || !is_integer(labels.dtype()))
    fail_op(op,
            fmt::format("needs {} f32/f64 [N,C] and integer labels [N], got {} and {}",
                        op == "nll_loss" ? "log-probabilities" : "logits", type_str(x.type()),
                        type_str(labels.type())),
            operands, loc);
  if (weight.defined() && weight.type() != TensorType{x.dtype(), {x.shape()[1]}})
    fail_op(op,
            fmt::format("weight must be {} (one per class, the dtype of the input), got {}",
                        type_str({x.dtype(), {x.shape()[1]}}), type_str(weight.type())),
            operands, loc);
}

struct Targets {
  Tensor counted;   // bool [N,1]: the row's label is not ignore_index
  Tensor weighted;  // [N,C]: the one-hot label times its class weight, zero on ignored rows
};

/// A label outside [0, C) other than ignore_index fails in one_hot.
Targets targets_of(const Tensor& x, const Tensor& labels, const Tensor& weight,
                   int64_t ignore_index, const Loc& loc) {
  const Tensor counted = ne(labels, scalar_like(static_cast<double>(ignore_index), labels, loc),
                            loc);
  const Tensor safe = where(counted, labels, 0.0, loc);
  Tensor t = mul(one_hot(safe, x.shape()[1], x.dtype(), loc),
                 unsqueeze(cast(counted, x.dtype(), loc), 1, loc), loc);
  // The weight is a constant, as in PyTorch (which has no gradient for it).
  if (weight.defined()) t = mul(t, unsqueeze(weight.detach(), 0, loc), loc);
  return {unsqueeze(counted, 1, loc), t};
}

/// Per-row losses [N] reduced; mean divides by the summed weights of the counted rows.
Tensor reduce_rows(const Tensor& rows, const Tensor& targets, Reduction r, const Loc& loc) {
  switch (r) {
    case Reduction::None: return rows;
    case Reduction::Sum: return sum(rows, {}, false, loc);
    case Reduction::Mean: return div(sum(rows, {}, false, loc), sum(targets, {}, false, loc), loc);
  }
  LT_UNREACHABLE();
}

Tensor nll(const Tensor& logp, const Tensor& targets, Reduction r, const Loc& loc) {
  const Tensor rows = neg(sum(mul(targets, logp, loc), {1}, false, loc), loc);
  return reduce_rows(rows, targets, r, loc);
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, double label_smoothing,
                     Loc loc) {
  return cross_entropy(logits, labels, CrossEntropyOptions{.label_smoothing = label_smoothing},
                       loc);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, const CrossEntropyOptions& o,
                     Loc loc) {
  const Tensor all[] = {logits, labels, o.weight};
  const Reduction r = parse_reduction(o.reduction, "cross_entropy", {all, 2}, loc);
  const double ls = o.label_smoothing;
  if (r == Reduction::Mean && !o.weight.defined()) {
    const Tensor in[] = {logits, labels};
    return apply1(Op::CrossEntropy, in, ir::CrossEntropyAttrs{ls, o.ignore_index}, loc);
  }
  check_operands("cross_entropy", logits, labels, o.weight, loc);
  if (ls < 0 || ls > 1)
    fail_op("cross_entropy", fmt::format("label_smoothing {} outside [0, 1]", ls), all, loc);
  const Tensor logp = log_softmax(logits, 1, loc);
  const Targets t = targets_of(logits, labels, o.weight, o.ignore_index, loc);
  const Tensor loss = nll(logp, t.weighted, r, loc);
  if (ls == 0) return loss;
  // PyTorch's smoothing term: -sum_c w_c logp[i,c] on counted rows, reduced like the loss (mean
  // over the same summed label weights), mixed in as (1 - ls) nll + ls / C smooth.
  Tensor per_class = o.weight.defined() ? mul(logp, unsqueeze(o.weight.detach(), 0, loc), loc)
                                        : logp;
  per_class = where(t.counted, per_class, 0.0, loc);
  const Tensor smooth =
      reduce_rows(neg(sum(per_class, {1}, false, loc), loc), t.weighted, r, loc);
  const double c = static_cast<double>(logits.shape()[1]);
  return add(mul(loss, scalar_like(1 - ls, loss, loc), loc),
             mul(smooth, scalar_like(ls / c, smooth, loc), loc), loc);
}

Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const NllLossOptions& o, Loc loc) {
  const Tensor all[] = {log_probs, labels};
  const Reduction r = parse_reduction(o.reduction, "nll_loss", all, loc);
  check_operands("nll_loss", log_probs, labels, o.weight, loc);
  const Targets t = targets_of(log_probs, labels, o.weight, o.ignore_index, loc);
  return nll(log_probs, t.weighted, r, loc);
}

}  // namespace lt
