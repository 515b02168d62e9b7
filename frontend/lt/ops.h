// The op functions users call. Each checks its operands at once and throws lt::Error naming the
// op, the operand types and the caller's file:line. Operands of different dtypes promote as in
// PyTorch (torch.result_type; docs/OPS.md, "Type promotion").
#pragma once
#include <concepts>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lt/scalar.h"
#include "lt/tensor.h"

namespace lt {

using Axes = Dims;

/// torch.result_type: the dtype a binary op computes in. A 0-d tensor or a number takes part only
/// where it is of a higher category (bool < integer < float): result_type(x_bf16, 2.5) is bf16,
/// result_type(ids_i64, 0.5) f32.
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);
DType result_type(Scalar a, const Tensor& b);

// --- elementwise (NumPy broadcasting; mixed dtypes promote, div of integers is true division) ---
Tensor neg(const Tensor& x, Loc loc = Loc::current());
Tensor abs(const Tensor& x, Loc loc = Loc::current());
Tensor exp(const Tensor& x, Loc loc = Loc::current());
/// e^x - 1 and log(1 + x), accurate where |x| is tiny (PyTorch's expm1 and log1p).
Tensor expm1(const Tensor& x, Loc loc = Loc::current());
Tensor log(const Tensor& x, Loc loc = Loc::current());
Tensor log1p(const Tensor& x, Loc loc = Loc::current());
Tensor sqrt(const Tensor& x, Loc loc = Loc::current());
Tensor rsqrt(const Tensor& x, Loc loc = Loc::current());
Tensor tanh(const Tensor& x, Loc loc = Loc::current());
Tensor sigmoid(const Tensor& x, Loc loc = Loc::current());
Tensor relu(const Tensor& x, Loc loc = Loc::current());
/// x Phi(x), PyTorch's approximate: "none" (exact, x/2 (1 + erf(x/sqrt(2)))) or "tanh"
/// (x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the IR op gelu).
Tensor gelu(const Tensor& x, std::string_view approximate = "none", Loc loc = Loc::current());
/// x sigmoid(x) (PyTorch's silu, or swish).
Tensor silu(const Tensor& x, Loc loc = Loc::current());
/// x where x > 0, else negative_slope x (PyTorch's leaky_relu; its gradient at 0 is the slope).
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01, Loc loc = Loc::current());
/// x clamped to [min_val, max_val] (PyTorch's hardtanh): the gradient is 1 strictly inside,
/// 0 at the bounds themselves, as PyTorch's (clamp's is 1 there).
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0,
                Loc loc = Loc::current());
/// hardtanh(x, 0, 6) (PyTorch's relu6).
Tensor relu6(const Tensor& x, Loc loc = Loc::current());
/// x relu6(x + 3) / 6 (PyTorch's hardswish); the gradient at -3 is -1/2 and at 3 is 3/2, as
/// PyTorch's (the middle piece's slope x/3 + 1/2 on [-3, 3] inclusive).
Tensor hardswish(const Tensor& x, Loc loc = Loc::current());
/// relu6(x + 3) / 6 (PyTorch's hardsigmoid); the gradient is 1/6 on (-3, 3), 0 at the kinks.
Tensor hardsigmoid(const Tensor& x, Loc loc = Loc::current());
/// x where x > 0, else alpha (e^x - 1) (PyTorch's elu; the gradient at 0 is alpha).
Tensor elu(const Tensor& x, double alpha = 1.0, Loc loc = Loc::current());
/// log(1 + e^(beta x)) / beta, or x where beta x > threshold (PyTorch's softplus).
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0,
                Loc loc = Loc::current());
/// x tanh(softplus(x)) (PyTorch's mish).
Tensor mish(const Tensor& x, Loc loc = Loc::current());
Tensor sin(const Tensor& x, Loc loc = Loc::current());
Tensor cos(const Tensor& x, Loc loc = Loc::current());
Tensor reciprocal(const Tensor& x, Loc loc = Loc::current());
Tensor erf(const Tensor& x, Loc loc = Loc::current());
Tensor isfinite(const Tensor& x, Loc loc = Loc::current());
/// floor, ceil and round (halves to even; with decimals, of x * 10^decimals, as PyTorch's) keep
/// an integer tensor as it is; a bool one is refused.
Tensor floor(const Tensor& x, Loc loc = Loc::current());
Tensor ceil(const Tensor& x, Loc loc = Loc::current());
Tensor round(const Tensor& x, int64_t decimals = 0, Loc loc = Loc::current());
/// Rounds toward zero (torch.trunc, fix); an integer tensor as it is, a bool one refused.
Tensor trunc(const Tensor& x, Loc loc = Loc::current());
Tensor cast(const Tensor& x, DType to, Loc loc = Loc::current());

Tensor add(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor sub(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor mul(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor div(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor pow(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor pow(const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor maximum(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor minimum(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
/// Python's % and // (torch.remainder, torch.floor_divide): the remainder takes b's sign,
/// the quotient rounds toward -inf; integers divided by 0 are an error.
Tensor remainder(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor remainder(const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor floor_divide(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor floor_divide(const Tensor& a, Scalar b, Loc loc = Loc::current());
/// C's fmod (torch.fmod): the remainder of division rounded toward zero, with a's sign;
/// integers divided by 0 are an error.
Tensor fmod(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor fmod(const Tensor& a, Scalar b, Loc loc = Loc::current());
/// torch.bitwise_and, _or, _xor, _not (also &, |, ^, ~): integers in two's complement, bool as
/// logic; operands promote as add's (an integer with a bool gives the integer); a float operand
/// is PyTorch's error ("bitwise_and_cpu" not implemented for 'Float'). No gradient.
Tensor bitwise_and(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor bitwise_and(const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor bitwise_or(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor bitwise_or(const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor bitwise_xor(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor bitwise_xor(const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor bitwise_not(const Tensor& x, Loc loc = Loc::current());
Tensor eq(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ne(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor lt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor le(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor gt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ge(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, const Tensor& a, Scalar b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, Scalar a, const Tensor& b, Loc loc = Loc::current());
/// x limited to [min, max]; either bound may be left out (not both). The bounds promote with x
/// as numbers do (clamp(ids, 0.5) is f32, clamp(ids, 0) stays i64), as PyTorch's.
/// Gradient 1 where min <= x <= max, else 0; min > max gives max everywhere (PyTorch's).
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = {},
             Loc loc = Loc::current());
/// x with `value` where the bool mask (broadcast to x) is true; no gradient flows there.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Loc loc = Loc::current());
/// A 0-d tensor of `like`'s dtype holding v (a constant of an op that keeps x's dtype).
Tensor scalar_like(double v, const Tensor& like, Loc loc = Loc::current());

// --- reductions (empty axes = all; negative axes count from the end) ---
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor max(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor min(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
/// The index of the first maximum (minimum) along axis; a NaN counts as the maximum (minimum).
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor argmin(const Tensor& x, int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdim = false, Loc loc = Loc::current());
/// The product over axes (torch.prod); of an empty axis 1. Bool and integers multiply in i64.
Tensor prod(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
/// log(exp(a) + exp(b)) without overflow, broadcasting (torch.logaddexp).
Tensor logaddexp(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
/// Values and their int64 indices along a dim (torch.max(x, dim), torch.topk).
struct ValuesIndices {
  Tensor values, indices;
};
namespace detail {
ValuesIndices max_along(const Tensor& x, int64_t dim, bool keepdim, Loc loc);
ValuesIndices min_along(const Tensor& x, int64_t dim, bool keepdim, Loc loc);
}  // namespace detail
/// torch.max(x, dim, keepdim): the maximum along dim and the index of its first occurrence
/// (argmax). The gradient reaches that index only (PyTorch's rule for this overload; max(x, axes)
/// splits it among ties). A template so that max(x, {1}) stays the reduction over axes.
template <std::integral I>
ValuesIndices max(const Tensor& x, I dim, bool keepdim = false, Loc loc = Loc::current()) {
  return detail::max_along(x, static_cast<int64_t>(dim), keepdim, loc);
}
template <std::integral I>
ValuesIndices min(const Tensor& x, I dim, bool keepdim = false, Loc loc = Loc::current()) {
  return detail::min_along(x, static_cast<int64_t>(dim), keepdim, loc);
}
/// The k largest (smallest) values along dim, sorted, and their indices; equal values come in
/// index order and NaN counts as the largest. k must be within the dim's size. `sorted` = false
/// still sorts (an order PyTorch may return too). No gradient.
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                   bool sorted = true, Loc loc = Loc::current());
/// The tensors, unchanged, through one opt_barrier (XLA's optimization barrier): a lazy graph's
/// passes do not see through it, so ops on its results are not merged with the same ops on the
/// tensors, and none of them runs before every operand exists. Eagerly: copies. No gradient.
std::vector<Tensor> optimization_barrier(std::span<const Tensor> tensors,
                                         Loc loc = Loc::current());
/// Running sums along dim; bool and integer tensors are summed in i64 (as PyTorch), floats
/// accumulate in double. Gradient: the running sum from the other end.
Tensor cumsum(const Tensor& x, int64_t dim, Loc loc = Loc::current());
/// Variance over dims (empty = all) with Bessel's correction (divide by n - 1) when unbiased,
/// else by n; n - 1 = 0 gives NaN, as PyTorch. std is its square root.
Tensor var(const Tensor& x, Axes dims = {}, bool unbiased = true, bool keepdim = false,
           Loc loc = Loc::current());
Tensor std(const Tensor& x, Axes dims = {}, bool unbiased = true, bool keepdim = false,
           Loc loc = Loc::current());
/// Sums a broadcast result back to `shape` (the adjoint of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape, Loc loc = Loc::current());

// --- views: results share their base's values as PyTorch's views share storage (an in-place op
// on either is seen by both; docs/OPS.md, "Views"). slice, permute, expand and reshape where
// PyTorch's layout allows are views, and so is what is built from them (transpose, squeeze,
// unsqueeze, flatten, narrow, select, split, chunk, unbind) ---
/// One entry may be -1 (inferred). A view where PyTorch's would be, else a copy (a reshape of a
/// transposed tensor).
Tensor reshape(const Tensor& x, Shape shape, Loc loc = Loc::current());
/// reshape that is always a view: where the layout cannot be viewed so, PyTorch's error.
Tensor view(const Tensor& x, Shape shape, Loc loc = Loc::current());
/// x itself where PyTorch's layout is contiguous, else a copy.
Tensor contiguous(const Tensor& x, Loc loc = Loc::current());
/// A copy with its own storage (gradients flow through it).
Tensor clone(const Tensor& x, Loc loc = Loc::current());
Tensor permute(const Tensor& x, Axes perm, Loc loc = Loc::current());
Tensor transpose(const Tensor& x, int64_t a, int64_t b, Loc loc = Loc::current());
/// -1 keeps a dimension; new leading dims may be added.
Tensor expand(const Tensor& x, Shape shape, Loc loc = Loc::current());
/// Python-style [start:stop:step] on one axis; negative indices count from the end, out-of-range
/// bounds clamp.
Tensor slice(const Tensor& x, int64_t axis, int64_t start, int64_t stop, int64_t step = 1,
             Loc loc = Loc::current());
Tensor concat(std::span<const Tensor> xs, int64_t axis, Loc loc = Loc::current());
Tensor concat(std::initializer_list<Tensor> xs, int64_t axis, Loc loc = Loc::current());
/// Constant padding; pads[i] = {before, after} for axis i, fewer entries pad the leading axes only.
Tensor pad(const Tensor& x, std::vector<std::pair<int64_t, int64_t>> pads, double value = 0,
           Loc loc = Loc::current());
Tensor squeeze(const Tensor& x, int64_t axis, Loc loc = Loc::current());
Tensor unsqueeze(const Tensor& x, int64_t axis, Loc loc = Loc::current());
Tensor flatten(const Tensor& x, int64_t start_axis = 0, int64_t end_axis = -1,
               Loc loc = Loc::current());

// --- library ops ---
/// [...,M,K] x [...,K,N] with broadcast batch dims; the flags transpose the last two dims.
Tensor matmul(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              Loc loc = Loc::current());
/// a[i] * b[j] of two 1-d tensors (torch.outer).
Tensor outer(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
/// beta * input + alpha * (batch1 @ batch2), batch1 [B,N,M], batch2 [B,M,P], input broadcast to
/// [B,N,P] (torch.baddbmm; beta = 0 ignores input).
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, double beta = 1,
               double alpha = 1, Loc loc = Loc::current());
/// x W^T + b with W [out, in], like torch.nn.functional.linear.
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& b = {}, Loc loc = Loc::current());

struct Conv2dOptions {
  std::vector<int64_t> stride{1, 1}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, Conv2dOptions o = {},
              Loc loc = Loc::current());
struct Pool2dOptions {
  std::vector<int64_t> kernel{2, 2}, stride{}, padding{0, 0};  // stride defaults to kernel
  bool ceil_mode = false;  // round the output size up (PyTorch's rule: no window starts past
                           // the input and its left padding)
  bool count_include_pad = true;  // avg: padded taps count in the divisor (false: only inputs)
  std::vector<int64_t> dilation{1, 1};  // max: the taps' spacing
};
Tensor max_pool2d(const Tensor& x, Pool2dOptions o = {}, Loc loc = Loc::current());
/// max_pool2d of [N, C, H, W] (or [C, H, W]) and, as PyTorch's max_pool2d_with_indices, the
/// flat position h W + w in the input's plane of each window's first maximum in row-major
/// order, which is also where the gradient goes. Each window's taps are gathered into a trailing
/// dim (a copy of kernel-size times the output), as is a dilated max_pool2d's.
ValuesIndices max_pool2d_with_indices(const Tensor& x, Pool2dOptions o = {},
                                      Loc loc = Loc::current());
Tensor avg_pool2d(const Tensor& x, Pool2dOptions o = {}, Loc loc = Loc::current());
/// torch.nn.functional.conv1d: x [N, C, L] (or unbatched [C, L]), w [O, C / groups, K].
struct Conv1dOptions {
  int64_t stride = 1, padding = 0, dilation = 1, groups = 1;
};
Tensor conv1d(const Tensor& x, const Tensor& w, const Tensor& bias = {}, Conv1dOptions o = {},
              Loc loc = Loc::current());
/// torch.nn.functional.conv_transpose2d: x [N, Cin, H, W] (or unbatched), w [Cin, Cout / groups,
/// kH, kW]; output (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1, where
/// output_padding must be smaller than the stride or the dilation.
struct ConvTranspose2dOptions {
  std::vector<int64_t> stride{1, 1}, padding{0, 0}, output_padding{0, 0};
  int64_t groups = 1;
  std::vector<int64_t> dilation{1, 1};
};
Tensor conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias = {},
                        ConvTranspose2dOptions o = {}, Loc loc = Loc::current());
/// torch.nn.functional.interpolate on [N, C, H, W]: to `size` ({h, w}, or one number for both),
/// or by `scale_factor` (the same; the output is floor(size * factor), and the factor, not the
/// sizes' ratio, maps positions, as PyTorch without recompute_scale_factor). Modes "nearest"
/// (source floor(dst * in / out)) and "bilinear" (align_corners: corner pixels map to corners;
/// without it pixel centres, with source positions below 0 clamped to 0).
struct InterpolateOptions {
  std::vector<int64_t> size{};
  std::vector<double> scale_factor{};
  std::string mode = "nearest";
  std::optional<bool> align_corners{};  // bilinear only; unset is false
};
Tensor interpolate(const Tensor& x, const InterpolateOptions& o, Loc loc = Loc::current());
/// Pooling of [N, C, H, W] (or [C, H, W]) to an output size ({h, w}, or one number for both):
/// output cell i along a dim pools input [floor(i in / out), ceil((i + 1) in / out)), PyTorch's
/// windows. The max's indices are flat positions h W + w in the input's plane, the first maximum
/// of a window in row-major order, which is also where the gradient goes.
Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size,
                           Loc loc = Loc::current());
Tensor adaptive_max_pool2d(const Tensor& x, std::vector<int64_t> output_size,
                           Loc loc = Loc::current());
ValuesIndices adaptive_max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> output_size,
                                               Loc loc = Loc::current());

// --- neural-network ops ---
Tensor softmax(const Tensor& x, int64_t axis = -1, Loc loc = Loc::current());
Tensor log_softmax(const Tensor& x, int64_t axis = -1, Loc loc = Loc::current());
/// torch.nn.functional.cross_entropy's options. `weight` ([C], the logits' dtype) scales each
/// row's loss by its label's weight (a constant: no gradient); rows labelled ignore_index count
/// for nothing; "mean" divides by the summed weights of the counted rows (no such row: NaN).
struct CrossEntropyOptions {
  Tensor weight = {};
  int64_t ignore_index = -100;
  std::string reduction = "mean";  // "none" ([N]), "sum" or "mean"
  double label_smoothing = 0;      // in [0, 1]
};
/// Cross entropy of logits [N,C] against integer labels [N] (class indices).
Tensor cross_entropy(const Tensor& logits, const Tensor& labels,
                     const CrossEntropyOptions& o = {}, Loc loc = Loc::current());
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, double label_smoothing,
                     Loc loc = Loc::current());
struct NllLossOptions {
  Tensor weight = {};
  int64_t ignore_index = -100;
  std::string reduction = "mean";
};
/// Negative log likelihood of log-probabilities [N,C] (log_softmax's output) at labels [N].
Tensor nll_loss(const Tensor& log_probs, const Tensor& labels, const NllLossOptions& o = {},
                Loc loc = Loc::current());
/// Regression losses of an input against a target of the same type (float), elementwise then
/// reduced: "none" (the input's shape), "sum" or "mean" (default, over every element).
/// mse_loss: (x - t)^2; l1_loss: |x - t|; smooth_l1_loss: 0.5 (x - t)^2 / beta where
/// |x - t| < beta, else |x - t| - 0.5 beta (beta 0: l1_loss); huber_loss: 0.5 (x - t)^2 where
/// |x - t| < delta, else delta (|x - t| - 0.5 delta).
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                Loc loc = Loc::current());
Tensor l1_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
               Loc loc = Loc::current());
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, double beta = 1.0,
                      const std::string& reduction = "mean", Loc loc = Loc::current());
Tensor huber_loss(const Tensor& input, const Tensor& target, double delta = 1.0,
                  const std::string& reduction = "mean", Loc loc = Loc::current());
/// torch.nn.functional.binary_cross_entropy_with_logits's options. `weight` scales each
/// element's loss and `pos_weight` the positive term (typically [C], one per class along the last
/// dim); both take the logits' dtype and broadcast to their shape.
struct BceWithLogitsOptions {
  Tensor weight = {};
  Tensor pos_weight = {};
  std::string reduction = "mean";  // "none", "sum" or "mean" (over every element)
};
/// -w [p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))] per element, for logits x and targets t
/// in [0, 1] of the same type, computed without overflow for large |x|.
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target,
                                        const BceWithLogitsOptions& o = {},
                                        Loc loc = Loc::current());
/// Normalizes over the trailing gamma.rank() dims.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5,
                  Loc loc = Loc::current());
/// Training: batch statistics, and running_mean/var (if defined) are updated in place with
/// `momentum` in [0, 1] (PyTorch's convention, unbiased running variance). Eval: running
/// statistics. x may be bf16 or f16 with f32 parameters: it is read widened, the result is f32,
/// and x's gradient comes back in x's dtype.
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor running_mean,
                  Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5,
                  Loc loc = Loc::current());
Tensor embedding(const Tensor& table, const Tensor& ids, Loc loc = Loc::current());
Tensor one_hot(const Tensor& ids, int64_t num_classes, DType dtype = DType::F32,
               Loc loc = Loc::current());
/// Zeroes each element with probability p and scales the rest by 1/(1-p); identity when !training.
Tensor dropout(const Tensor& x, double p, bool training = true, Loc loc = Loc::current());

// --- indexing and shaping (PyTorch's signatures; dims may be negative) ---
/// torch.gather: y[c] = x[c with c[dim] = index[c]], the index's shape; index int64 of x's rank,
/// no larger than x outside dim. An index outside [0, size) is an error (at run time).
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index, Loc loc = Loc::current());
/// Tensor.scatter: x with src[c] (or value) written at c with c[dim] = index[c]; a position named
/// twice gets the last write along dim. The index is no larger than src, nor than x outside dim.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
               Loc loc = Loc::current());
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value,
               Loc loc = Loc::current());
/// Tensor.scatter_add: as scatter, src added; repeated positions add up in index order.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                   Loc loc = Loc::current());
/// torch.index_select: the entries of a 1-d int32 or int64 index along dim.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index, Loc loc = Loc::current());
/// Tensor.index_add: x with alpha * src's entry k added at index[k] along dim; src is x's shape
/// with dim of the index's length.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                 double alpha = 1, Loc loc = Loc::current());
/// torch.sort (stable): values and int64 indices along dim; equal values keep their order, NaN
/// counts as larger than every number (last ascending). The values carry the gradient.
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false,
                   Loc loc = Loc::current());
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false,
               Loc loc = Loc::current());
/// torch.flip: reverses the order along each of dims.
Tensor flip(const Tensor& x, Axes dims, Loc loc = Loc::current());
/// torch.roll: element i of each dim moves to (i + shift) mod size; without dims the flattened
/// tensor rolls (one shift) and keeps its shape.
Tensor roll(const Tensor& x, Dims shifts, Dims dims = {}, Loc loc = Loc::current());
Tensor roll(const Tensor& x, int64_t shift, Loc loc = Loc::current());
Tensor roll(const Tensor& x, int64_t shift, int64_t dim, Loc loc = Loc::current());
/// torch.tril / torch.triu on the last two dims (any batch dims): x where col - row <= diagonal
/// (tril) or >= diagonal (triu), else 0.
Tensor tril(const Tensor& x, int64_t diagonal = 0, Loc loc = Loc::current());
Tensor triu(const Tensor& x, int64_t diagonal = 0, Loc loc = Loc::current());
/// torch.stack: tensors of one shape joined along a new dim.
Tensor stack(std::span<const Tensor> xs, int64_t dim = 0, Loc loc = Loc::current());
Tensor stack(std::initializer_list<Tensor> xs, int64_t dim = 0, Loc loc = Loc::current());
/// torch.split: pieces of split_size along dim (the last may be shorter), or of the given sizes
/// (split_with_sizes; they must sum to the dim's size). A one-element list {n} is split_size n,
/// as in libtorch.
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0,
                          Loc loc = Loc::current());
std::vector<Tensor> split(const Tensor& x, Dims split_sizes, int64_t dim = 0,
                          Loc loc = Loc::current());
std::vector<Tensor> split_with_sizes(const Tensor& x, Dims split_sizes, int64_t dim = 0,
                                     Loc loc = Loc::current());
/// torch.chunk: pieces of ceil(size / chunks) along dim, so possibly fewer than chunks.
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0,
                          Loc loc = Loc::current());
/// torch.unbind: every index along dim, the dim removed.
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0, Loc loc = Loc::current());
/// torch.narrow: [start, start + length) along dim; a negative start counts from the end.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length,
              Loc loc = Loc::current());
/// torch.select: one index along dim (negative counts from the end), the dim removed.
Tensor select(const Tensor& x, int64_t dim, int64_t index, Loc loc = Loc::current());

/// torch.diagonal: the elements (i, i + offset) of dims dim1 and dim2, those dims removed and
/// the diagonal appended as the last dim; a view (writes through to x).
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1,
                Loc loc = Loc::current());
/// torch.diag: a vector's square matrix with it on the offset diagonal, or a copy of a
/// matrix's offset diagonal.
Tensor diag(const Tensor& x, int64_t offset = 0, Loc loc = Loc::current());
/// torch.trace: the sum of a matrix's diagonal.
Tensor trace(const Tensor& x, Loc loc = Loc::current());
/// torch.einsum: the sum over the subscripts not in the output ("ij,jk->ik"; without "->" the
/// output is the subscripts seen once, in alphabetical order, after the "..." dims). A subscript
/// repeated in one operand takes its diagonal; dims of size 1, and those under "...",
/// broadcast. Contracts the operands left to right, each pair as one batched matmul.
Tensor einsum(std::string_view equation, std::span<const Tensor> operands,
              Loc loc = Loc::current());
Tensor einsum(std::string_view equation, std::initializer_list<Tensor> operands,
              Loc loc = Loc::current());

// --- shapes that depend on values: the values deciding the shape are read at the call (in
// lazy mode a sync, counted under the op's name and the caller's line); the selected elements
// keep their autograd history and, in lazy mode, stay in the graph (docs/OPS.md) ---
/// torch.nonzero: the int64 [n, rank] coordinates of x's nonzero elements, in row-major order.
Tensor nonzero(const Tensor& x, Loc loc = Loc::current());
/// torch.masked_select: x's elements where mask (bool; the two broadcast) is true, as 1-d.
Tensor masked_select(const Tensor& x, const Tensor& mask, Loc loc = Loc::current());
/// x[index] for one tensor index, as PyTorch's indexing: a bool mask over x's leading dims
/// selects those elements ([n, x's other dims...]); an int64 or int32 tensor picks entries of
/// dim 0, negative ones from the end (index's shape + x's other dims).
Tensor index(const Tensor& x, const Tensor& index, Loc loc = Loc::current());
/// torch.index_put: x with x[index] = values (broadcast to the selection's shape), or += where
/// accumulate (repeated positions add up); Tensor::index_put_ is the in-place form.
Tensor index_put(const Tensor& x, const Tensor& index, const Tensor& values,
                 bool accumulate = false, Loc loc = Loc::current());
/// torch.unique of the flattened tensor: its distinct values in ascending order (NaNs last,
/// each its own value), and where asked, for each element the position of its value (x's
/// shape) and each value's count. Not differentiable: the values carry no autograd history.
struct Unique {
  Tensor values, inverse, counts;
};
Unique unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
              bool return_counts = false, Loc loc = Loc::current());

// --- operators (located through an implicit wrapper so errors name the user's line) ---
struct At {
  const Tensor& t;
  Loc loc;
  At(const Tensor& t, Loc loc = Loc::current()) : t(t), loc(loc) {}  // NOLINT: implicit on purpose
};
Tensor operator-(At x);
Tensor operator+(At a, const Tensor& b);
Tensor operator-(At a, const Tensor& b);
Tensor operator*(At a, const Tensor& b);
Tensor operator/(At a, const Tensor& b);
Tensor operator+(At a, Scalar b);
Tensor operator-(At a, Scalar b);
Tensor operator*(At a, Scalar b);
Tensor operator/(At a, Scalar b);
Tensor operator+(Scalar a, At b);
Tensor operator-(Scalar a, At b);
Tensor operator*(Scalar a, At b);
Tensor operator/(Scalar a, At b);
Tensor operator~(At x);
Tensor operator&(At a, const Tensor& b);
Tensor operator|(At a, const Tensor& b);
Tensor operator^(At a, const Tensor& b);
Tensor operator&(At a, Scalar b);
Tensor operator|(At a, Scalar b);
Tensor operator^(At a, Scalar b);
Tensor operator<(At a, const Tensor& b);
Tensor operator<=(At a, const Tensor& b);
Tensor operator>(At a, const Tensor& b);
Tensor operator>=(At a, const Tensor& b);
Tensor operator<(At a, Scalar b);
Tensor operator<=(At a, Scalar b);
Tensor operator>(At a, Scalar b);
Tensor operator>=(At a, Scalar b);

}  // namespace lt
