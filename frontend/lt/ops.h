// The op functions users call. Each checks its operands at once and throws lt::Error naming the
// op, the operand types and the caller's file:line. Scalars take the dtype of the tensor operand.
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "lt/tensor.h"

namespace lt {

using Axes = std::vector<int64_t>;

// --- elementwise (NumPy broadcasting; binary ops need equal dtypes) ---
Tensor neg(const Tensor& x, Loc loc = Loc::current());
Tensor abs(const Tensor& x, Loc loc = Loc::current());
Tensor exp(const Tensor& x, Loc loc = Loc::current());
Tensor log(const Tensor& x, Loc loc = Loc::current());
Tensor sqrt(const Tensor& x, Loc loc = Loc::current());
Tensor rsqrt(const Tensor& x, Loc loc = Loc::current());
Tensor tanh(const Tensor& x, Loc loc = Loc::current());
Tensor sigmoid(const Tensor& x, Loc loc = Loc::current());
Tensor relu(const Tensor& x, Loc loc = Loc::current());
Tensor gelu(const Tensor& x, Loc loc = Loc::current());
Tensor sin(const Tensor& x, Loc loc = Loc::current());
Tensor cos(const Tensor& x, Loc loc = Loc::current());
Tensor reciprocal(const Tensor& x, Loc loc = Loc::current());
Tensor isfinite(const Tensor& x, Loc loc = Loc::current());
Tensor cast(const Tensor& x, DType to, Loc loc = Loc::current());

Tensor add(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor sub(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor mul(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor div(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor pow(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor pow(const Tensor& a, double b, Loc loc = Loc::current());
Tensor maximum(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor minimum(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor eq(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ne(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor lt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor le(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor gt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ge(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, const Tensor& a, double b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, double a, const Tensor& b, Loc loc = Loc::current());
/// A 0-d tensor of `like`'s dtype holding v (how scalar operands enter the graph).
Tensor scalar_like(double v, const Tensor& like, Loc loc = Loc::current());

// --- reductions (empty axes = all; negative axes count from the end) ---
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor max(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor min(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor argmax(const Tensor& x, int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdim = false, Loc loc = Loc::current());
/// Sums a broadcast result back to `shape` (the adjoint of broadcasting).
Tensor sum_to(const Tensor& x, const Shape& shape, Loc loc = Loc::current());

// --- views (eager mode copies) ---
/// One entry may be -1 (inferred).
Tensor reshape(const Tensor& x, Shape shape, Loc loc = Loc::current());
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
};
Tensor max_pool2d(const Tensor& x, Pool2dOptions o = {}, Loc loc = Loc::current());
Tensor avg_pool2d(const Tensor& x, Pool2dOptions o = {}, Loc loc = Loc::current());
/// Only the 1x1 output (global average pool) is supported; other sizes throw.
Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size,
                           Loc loc = Loc::current());

// --- neural-network ops ---
Tensor softmax(const Tensor& x, int64_t axis = -1, Loc loc = Loc::current());
Tensor log_softmax(const Tensor& x, int64_t axis = -1, Loc loc = Loc::current());
/// Mean cross entropy of logits [N,C] against integer labels [N].
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, double label_smoothing = 0,
                     Loc loc = Loc::current());
/// Normalizes over the trailing gamma.rank() dims.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5,
                  Loc loc = Loc::current());
/// Training: batch statistics, and running_mean/var (if defined) are updated in place with
/// `momentum` (PyTorch's convention, unbiased running variance). Eval: running statistics.
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, Tensor running_mean,
                  Tensor running_var, bool training, double momentum = 0.1, double eps = 1e-5,
                  Loc loc = Loc::current());
Tensor embedding(const Tensor& table, const Tensor& ids, Loc loc = Loc::current());
Tensor one_hot(const Tensor& ids, int64_t num_classes, DType dtype = DType::F32,
               Loc loc = Loc::current());
/// Zeroes each element with probability p and scales the rest by 1/(1-p); identity when !training.
Tensor dropout(const Tensor& x, double p, bool training = true, Loc loc = Loc::current());

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
Tensor operator+(At a, double b);
Tensor operator-(At a, double b);
Tensor operator*(At a, double b);
Tensor operator/(At a, double b);
Tensor operator+(double a, At b);
Tensor operator-(double a, At b);
Tensor operator*(double a, At b);
Tensor operator/(double a, At b);
Tensor operator<(At a, const Tensor& b);
Tensor operator<=(At a, const Tensor& b);
Tensor operator>(At a, const Tensor& b);
Tensor operator>=(At a, const Tensor& b);
Tensor operator<(At a, double b);
Tensor operator<=(At a, double b);
Tensor operator>(At a, double b);
Tensor operator>=(At a, double b);

}  // namespace lt
