// Losses, PyTorch's semantics. cross_entropy's default (mean over rows, no class weight) is the
// fused cross_entropy row; a class weight or another reduction composes log_softmax and
// nll_loss, which is itself composed of rows (one_hot, mul, sum), so both differentiate through
// autograd as written. The regression losses and binary cross entropy are compositions of
// elementwise rows, which lazy mode fuses into one loop with their reduction.
#include <fmt/format.h>

#include <vector>

#include "frontend/dispatch.h"
#include "frontend/views.h"
#include "ir/shape.h"
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
  const Tensor safe = where(counted, labels, 0, loc);
  Tensor t = mul(one_hot(safe, x.shape()[1], x.dtype(), loc),
                 unsqueeze(cast(counted, x.dtype(), loc), 1, loc), loc);
  // The weight is a constant, as in PyTorch (which has no gradient for it).
  if (weight.defined()) t = mul(t, unsqueeze(snapshot(weight), 0, loc), loc);
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

/// Checks an elementwise loss's input and target: defined, float, of one type.
void check_pair(std::string_view op, const Tensor& x, const Tensor& t, const Loc& loc) {
  const Tensor all[] = {x, t};
  for (const Tensor& a : all)
    if (!a.defined()) fail_op(op, "operand is an undefined tensor", all, loc);
  if (!is_float(x.dtype()) || x.type() != t.type())
    fail_op(op,
            fmt::format("needs a float input and a target of the same type, got {} and {}",
                        type_str(x.type()), type_str(t.type())),
            all, loc);
}

/// Checks an elementwise weight: undefined, or of x's dtype and broadcasting to x's shape.
void check_weight(std::string_view op, std::string_view name, const Tensor& w, const Tensor& x,
                  std::span<const Tensor> operands, const Loc& loc) {
  if (!w.defined()) return;
  Shape joint;
  if (w.dtype() != x.dtype() || !broadcast_shapes(w.shape(), x.shape(), &joint) ||
      joint != x.shape())
    fail_op(op,
            fmt::format("{} must broadcast to {} (the logits' type), got {}", name,
                        type_str(x.type()), type_str(w.type())),
            operands, loc);
}

Tensor reduce_elements(const Tensor& loss, Reduction r, const Loc& loc) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss, {}, false, loc);
    case Reduction::Mean: return mean(loss, {}, false, loc);
  }
  LT_UNREACHABLE();
}

/// The difference of a regression loss's operands, after the checks.
Tensor difference(std::string_view op, const Tensor& x, const Tensor& t, const Loc& loc) {
  check_pair(op, x, t, loc);
  return sub(x, t, loc);
}

/// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta > 0).
Tensor smooth_l1(const Tensor& d, double beta, const Loc& loc) {
  const Tensor a = abs(d, loc);
  const Tensor quadratic = mul(mul(d, d, loc), scalar_like(0.5 / beta, d, loc), loc);
  const Tensor linear = sub(a, scalar_like(0.5 * beta, a, loc), loc);
  return where(lt(a, scalar_like(beta, a, loc), loc), quadratic, linear, loc);
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
  Tensor per_class = o.weight.defined() ? mul(logp, unsqueeze(snapshot(o.weight), 0, loc), loc)
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

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction,
                Loc loc) {
  const Tensor all[] = {input, target};
  const Reduction r = parse_reduction(reduction, "mse_loss", all, loc);
  const Tensor d = difference("mse_loss", input, target, loc);
  return reduce_elements(mul(d, d, loc), r, loc);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction, Loc loc) {
  const Tensor all[] = {input, target};
  const Reduction r = parse_reduction(reduction, "l1_loss", all, loc);
  return reduce_elements(abs(difference("l1_loss", input, target, loc), loc), r, loc);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, double beta,
                      const std::string& reduction, Loc loc) {
  const Tensor all[] = {input, target};
  const Reduction r = parse_reduction(reduction, "smooth_l1_loss", all, loc);
  if (!(beta >= 0))
    fail_op("smooth_l1_loss", fmt::format("beta must be >= 0, got {}", beta), all, loc);
  const Tensor d = difference("smooth_l1_loss", input, target, loc);
  return reduce_elements(beta == 0 ? abs(d, loc) : smooth_l1(d, beta, loc), r, loc);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, double delta,
                  const std::string& reduction, Loc loc) {
  const Tensor all[] = {input, target};
  const Reduction r = parse_reduction(reduction, "huber_loss", all, loc);
  if (!(delta > 0))
    fail_op("huber_loss", fmt::format("delta must be > 0, got {}", delta), all, loc);
  const Tensor d = difference("huber_loss", input, target, loc);
  // delta times smooth L1 with beta = delta: the same pieces, PyTorch's definition.
  const Tensor loss = smooth_l1(d, delta, loc);
  return reduce_elements(mul(loss, scalar_like(delta, loss, loc), loc), r, loc);
}

Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        const BceWithLogitsOptions& o, Loc loc) {
  const std::string_view op = "binary_cross_entropy_with_logits";
  std::vector<Tensor> operands{logits, target};
  for (const Tensor& w : {o.weight, o.pos_weight})
    if (w.defined()) operands.push_back(w);
  const Reduction r = parse_reduction(o.reduction, op, operands, loc);
  check_pair(op, logits, target, loc);
  check_weight(op, "weight", o.weight, logits, operands, loc);
  check_weight(op, "pos_weight", o.pos_weight, logits, operands, loc);
  // PyTorch's form: with m = max(-x, 0), log(1 + e^-x) = m + log(e^-m + e^(-x-m)), no exp of a
  // positive number; the loss is (1 - t) x + (1 + (p - 1) t) log(1 + e^-x).
  const Tensor& x = logits;
  const Tensor m = clamp(neg(x, loc), 0.0, std::nullopt, loc);
  const Tensor softplus_neg =
      add(m, log(add(exp(neg(m, loc), loc), exp(sub(neg(x, loc), m, loc), loc), loc), loc), loc);
  const Tensor one = scalar_like(1.0, x, loc);
  Tensor loss = mul(sub(one, target, loc), x, loc);
  if (o.pos_weight.defined()) {
    const Tensor log_weight = add(mul(sub(o.pos_weight, one, loc), target, loc), one, loc);
    loss = add(loss, mul(log_weight, softplus_neg, loc), loc);
  } else {
    loss = add(loss, softplus_neg, loc);
  }
  if (o.weight.defined()) loss = mul(loss, o.weight, loc);
  return reduce_elements(loss, r, loc);
}

}  // namespace lt
