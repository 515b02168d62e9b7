// Fused neural-network kernels: softmax family and cross entropy (max-shifted, so exp never
// overflows), and the id-indexed ops (embedding, its gradient, one_hot). Batch and layer norm
// live in norm.cpp, cumsum and topk in scan.cpp, gather and scatter in gather.cpp. Each op is
// one pass over its data, like PyTorch's eager kernels.
// Results are the same for any thread count; their last bits may depend on the buffers' address
// mod 64 (Eigen peels an unaligned head with scalar exp, which differs from its packet exp by an
// ulp); runtime buffers are 64-byte aligned, so an eager run repeats bit for bit.
#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/gather.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/norm.h"
#include "runtime/kernels/scan.h"
#include "runtime/kernels/softmax_rows.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

template <class T>
using Arr = Eigen::Array<T, Eigen::Dynamic, 1>;
template <class T>
using ArrMap = Eigen::Map<Arr<T>>;
template <class T>
using CArrMap = Eigen::Map<const Arr<T>>;

// About this many elements per parallel chunk: smaller chunks cost more in hand-off than they gain.
constexpr int64_t kGrainElems = 1 << 15;

int64_t grain_for(int64_t elems_per_item) {
  return std::max<int64_t>(1, kGrainElems / std::max<int64_t>(1, elems_per_item));
}

/// Calls f(I{}) with I the C++ type of an id tensor (the type rules allow i32 and i64 only).
template <class F>
decltype(auto) dispatch_ids(DType t, F&& f) {
  if (t == DType::I32) return f(int32_t{});
  return f(int64_t{});
}

// Ids are data, so only the kernel can check them. A worker must not throw (the pool would lose
// the exception), so each chunk records its first bad position, the minimum over chunks is the
// first bad position overall whatever the split, and the calling thread throws.
// `skip` is an id that is allowed anywhere (cross entropy's ignore_index).
template <class I>
void check_ids(const I* ids, int64_t n, int64_t limit, const char* op, const char* what,
               std::optional<int64_t> skip = std::nullopt) {
  std::atomic<int64_t> first{n};
  parallel_for(n, kGrainElems, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      if ((ids[i] >= 0 && ids[i] < limit) || (skip && ids[i] == *skip)) continue;
      int64_t cur = first.load();
      while (i < cur && !first.compare_exchange_weak(cur, i)) {
      }
      return;
    }
  });
  const int64_t pos = first.load();
  if (pos < n)
    throw Error(fmt::format("{}: {} {} out of range [0, {}) at position {}", op, what,
                            static_cast<int64_t>(ids[pos]), limit, pos));
}

// ---- softmax / log_softmax ----

/// y = exp(d) for d = x - max <= 0, with every result below the smallest normal number made 0.
/// Eigen's exp clamps its argument, so a masked logit (-1e9, or -inf) gives 2.9e-39, a subnormal,
/// not 0; subnormal operands cost Intel cores a microcode assist per instruction in every kernel
/// that reads them (in the GPT's step above all the attention's probabilities @ V). Only values
/// under 1.2e-38 (f32) change, far below a row sum's last bit, so sums of exp (log_softmax, cross
/// entropy) skip the zeroing. The zeroing is a loop of its own after Eigen's packet exp: Eigen
/// 3.4 does not vectorize select(), and an exp under one runs scalar.
template <class Y, class D>
void assign_exp_or_zero(Y&& y, const D& d) {
  using T = typename D::Scalar;
  static const T log_min = std::log(std::numeric_limits<T>::min());
  y = d.exp();
  T* out = y.data();
  for (Eigen::Index i = 0; i < y.size(); ++i) out[i] = d.coeff(i) < log_min ? T(0) : out[i];
}

// Softmax axis last: each row is contiguous.
template <class T>
void softmax_rows(const T* x, T* y, int64_t rows, int64_t n, bool log) {
  if constexpr (std::is_same_v<T, float>) {
    if (!log && softmax_rows_f32_fits(n))
      return parallel_for(rows, grain_for(n), [&](int64_t r0, int64_t r1) {
        softmax_rows_f32(x, y, r0, r1, n);
      });
  }
  parallel_for(rows, grain_for(n), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const CArrMap<T> xr(x + r * n, n);
      ArrMap<T> yr(y + r * n, n);
      const T m = xr.maxCoeff();
      if (log) {
        // (x - m) - log(sum) rather than x - (m + log(sum)): with |x| ~ 1000 the latter rounds
        // the small log-sum away in f32.
        const T log_sum = std::log((xr - m).exp().sum());
        yr = (xr - m) - log_sum;
      } else {
        assign_exp_or_zero(yr, xr - m);
        yr *= T(1) / yr.sum();
      }
    }
  });
}

struct AxisDims {
  int64_t outer, n, inner;  // x viewed as [outer, n, inner], softmax over n
};

// Softmax axis not last: a tile of up to kTile adjacent inner columns is reduced together, so
// every load is a contiguous run of the tile's width and vectorizes.
template <class T>
void softmax_strided(const T* x, T* y, AxisDims d, bool log) {
  constexpr int64_t kTile = 256;
  const int64_t tiles = (d.inner + kTile - 1) / kTile;
  const int64_t grain = grain_for(d.n * std::min(kTile, d.inner));
  parallel_for(d.outer * tiles, grain, [&](int64_t b, int64_t e) {
    Arr<T> mx_buf(kTile), sum_buf(kTile);
    for (int64_t t = b; t < e; ++t) {
      const int64_t j0 = (t % tiles) * kTile, w = std::min(kTile, d.inner - j0);
      const int64_t base = (t / tiles) * d.n * d.inner + j0;
      auto xk = [&](int64_t k) { return CArrMap<T>(x + base + k * d.inner, w); };
      auto yk = [&](int64_t k) { return ArrMap<T>(y + base + k * d.inner, w); };
      auto mx = mx_buf.head(w);
      auto sum = sum_buf.head(w);
      mx.setConstant(-std::numeric_limits<T>::infinity());
      for (int64_t k = 0; k < d.n; ++k) mx = mx.max(xk(k));
      sum.setZero();
      for (int64_t k = 0; k < d.n; ++k) {
        assign_exp_or_zero(yk(k), xk(k) - mx);
        sum += yk(k);
      }
      if (log) {
        sum = sum.log();
        for (int64_t k = 0; k < d.n; ++k) yk(k) = (xk(k) - mx) - sum;
      } else {
        sum = sum.inverse();
        for (int64_t k = 0; k < d.n; ++k) yk(k) *= sum;
      }
    }
  });
}

void softmax(TensorRef x, TensorRef y, int64_t axis, bool log) {
  if (x.numel() == 0) return;
  const std::span<const int64_t> s = x.shape();
  const AxisDims d{numel(s.first(axis)), s[axis], numel(s.subspan(axis + 1))};
  dispatch_float(x.dtype(), [&](auto z) {
    using T = decltype(z);
    if (d.inner == 1)
      softmax_rows(x.as<T>(), y.as<T>(), d.outer, d.n, log);
    else
      softmax_strided(x.as<T>(), y.as<T>(), d, log);
  });
}

// ---- cross entropy ----

// loss_i = -((1 - ls) * logp[i, label_i] + ls / C * sum_c logp[i, c]), averaged over the rows
// whose label is not ignore_index (PyTorch's mean: no such row gives 0/0 = NaN).
// logp is taken relative to the row max, so logits of 1000 neither overflow exp nor cancel.
template <class T, class I>
void cross_entropy_t(const ir::CrossEntropyAttrs& a, TensorRef logits, const I* labels, T* loss) {
  const int64_t n = logits.shape()[0], c = logits.shape()[1];
  const double ls = a.label_smoothing;
  check_ids(labels, n, c, "cross_entropy", "label", a.ignore_index);
  const T* x = logits.as<T>();
  std::vector<double> row_loss(n);
  parallel_for(n, grain_for(c), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (labels[r] == a.ignore_index) continue;
      const CArrMap<T> xr(x + r * c, c);
      const T m = xr.maxCoeff();
      const double log_sum = std::log(static_cast<double>((xr - m).exp().sum()));
      double l = (1 - ls) * (static_cast<double>(xr[labels[r]] - m) - log_sum);
      if (ls != 0) {
        const double sum_logp = (xr - m).template cast<double>().sum() - c * log_sum;
        l += ls / c * sum_logp;
      }
      row_loss[r] = -l;
    }
  });
  // Summed in row order on one thread: the same bits whatever the thread count.
  double total = 0;
  int64_t counted = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (labels[r] == a.ignore_index) continue;
    total += row_loss[r];
    ++counted;
  }
  *loss = static_cast<T>(total / static_cast<double>(counted));
}

void cross_entropy(const ir::CrossEntropyAttrs& a, Ins in, Outs out) {
  dispatch_float(in[0].dtype(), [&](auto z) {
    using T = decltype(z);
    dispatch_ids(in[1].dtype(), [&](auto i) {
      cross_entropy_t<T>(a, in[0], in[1].as<decltype(i)>(), out[0].as<T>());
    });
  });
}

// ---- embedding, embedding_grad, one_hot ----

template <class T, class I>
void embedding_t(TensorRef table, const I* ids, int64_t n, T* y) {
  const int64_t v = table.shape()[0], d = table.shape()[1];
  check_ids(ids, n, v, "embedding", "id");
  const T* t = table.as<T>();
  parallel_for(n, grain_for(d), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      std::memcpy(y + i * d, t + ids[i] * d, static_cast<size_t>(d) * sizeof(T));
  });
}

// Scatter-add of grad rows into [v, d]. Split over columns, not rows: every worker walks all ids
// in order, so each output element adds its contributions in the same order whatever the
// thread count (repeated ids, such as padding, are the common case), with no atomics.
template <class T, class I>
void embedding_grad_t(const T* g, const I* ids, int64_t n, int64_t v, int64_t d, T* y) {
  check_ids(ids, n, v, "embedding_grad", "id");
  constexpr int64_t kMinCols = 16;  // keep each worker's slice at least one vector wide
  parallel_for(d, std::max(kMinCols, grain_for(n + v)), [&](int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    for (int64_t r = 0; r < v; ++r) std::fill(y + r * d + c0, y + r * d + c1, T(0));
    for (int64_t i = 0; i < n; ++i)
      ArrMap<T>(y + ids[i] * d + c0, w) += CArrMap<T>(g + i * d + c0, w);
  });
}

template <class I>
void one_hot_t(const I* ids, int64_t n, int64_t k, TensorRef out) {
  check_ids(ids, n, k, "one_hot", "id");
  dispatch_dtype(out.dtype(), [&](auto z) {
    using T = decltype(z);
    T* y = out.as<T>();
    parallel_for(n, grain_for(k), [&](int64_t b, int64_t e) {
      std::fill(y + b * k, y + e * k, T(0));
      for (int64_t i = b; i < e; ++i) y[i * k + ids[i]] = T(1);
    });
  });
}

void id_op(ir::NnOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  const TensorRef ids = op == ir::NnOp::OneHot ? in[0] : in[1];
  dispatch_ids(ids.dtype(), [&](auto z) {
    using I = decltype(z);
    const I* id = ids.as<I>();
    const int64_t n = ids.numel();
    if (op == ir::NnOp::OneHot)
      return one_hot_t(id, n, std::get<ir::OneHotAttrs>(attrs).num_classes, out[0]);
    dispatch_float(in[0].dtype(), [&](auto f) {
      using T = decltype(f);
      if (op == ir::NnOp::Embedding) return embedding_t(in[0], id, n, out[0].as<T>());
      const int64_t v = std::get<ir::EmbeddingGradAttrs>(attrs).num_weights;
      embedding_grad_t(in[0].as<T>(), id, n, v, in[0].shape().back(), out[0].as<T>());
    });
  });
}

}  // namespace

void run_nn(ir::NnOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  switch (op) {
    case ir::NnOp::BatchNorm:
      return batch_norm(std::get<ir::BatchNormAttrs>(attrs), in, out);
    case ir::NnOp::BatchNormGrad:
      return batch_norm_grad(std::get<ir::BatchNormGradAttrs>(attrs).axis, in, out);
    case ir::NnOp::LayerNorm:
      return layer_norm(std::get<ir::NormAttrs>(attrs).eps, in, out);
    case ir::NnOp::LayerNormGrad:
      return layer_norm_grad(in, out);
    case ir::NnOp::Softmax:
      return softmax(in[0], out[0], std::get<ir::AxisAttrs>(attrs).axis, false);
    case ir::NnOp::LogSoftmax:
      return softmax(in[0], out[0], std::get<ir::AxisAttrs>(attrs).axis, true);
    case ir::NnOp::CrossEntropy:
      return cross_entropy(std::get<ir::CrossEntropyAttrs>(attrs), in, out);
    case ir::NnOp::Embedding:
    case ir::NnOp::EmbeddingGrad:
    case ir::NnOp::OneHot:
      return id_op(op, attrs, in, out);
    case ir::NnOp::Cumsum: return cumsum(std::get<ir::CumsumAttrs>(attrs), in, out);
    case ir::NnOp::TopK: return topk(std::get<ir::TopKAttrs>(attrs), in, out);
    case ir::NnOp::Gather: return gather(std::get<ir::AxisAttrs>(attrs).axis, in, out);
    case ir::NnOp::Scatter: return scatter(std::get<ir::AxisAttrs>(attrs).axis, false, in, out);
    case ir::NnOp::ScatterAdd: return scatter(std::get<ir::AxisAttrs>(attrs).axis, true, in, out);
    case ir::NnOp::OptBarrier:
      for (size_t i = 0; i < in.size(); ++i)
        if (in[i].data != out[i].data) std::memcpy(out[i].data, in[i].data, in[i].type->bytes());
      return;
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
