// Batch norm, its gradient, and layer norm: one fused kernel each (statistics, then normalize +
// affine; the gradient's sums, then the input gradient).
// Statistics are accumulated in double and taken about a point near the mean (two passes: the
// mean, then squared deviations; or, on rows of channels, one pass about the first row), so f32
// inputs with a large mean or many elements per channel keep their digits.
#include "runtime/kernels/norm.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "runtime/kernels/double_lanes.h"
#include "runtime/kernels/norm_rows.h"
#include "runtime/kernels/storage_types.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

template <class T>
using ArrMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using CArrMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

// About this many elements per parallel chunk: smaller chunks cost more in hand-off than they gain.
constexpr int64_t kGrainElems = 1 << 15;

int64_t grain_for(int64_t elems_per_item) {
  return std::max<int64_t>(1, kGrainElems / std::max<int64_t>(1, elems_per_item));
}

// Sums in double with kLanes independent accumulators: lane j adds the elements i + j of each
// block of kLanes, so the order depends only on n, never on the pointer's alignment
// (double_lanes.h says why vectors).
constexpr int kLanes = 16;
static_assert(kLanes % kVec == 0);
constexpr int kVecs = kLanes / kVec;

// s plus the lanes of acc, added as a tree in a fixed order: the vectors, then halves of the
// vector. One add after another would be a chain of 16 dependent adds, which on rows of 128
// (the GPT's layer norms) took as long as the loads and arithmetic of the row.
inline double add_lanes(double s, const VecD (&acc)[kVecs]) {
  VecD v = acc[0];
  for (int i = 1; i < kVecs; ++i) v += acc[i];
  double h[kVec];
  std::memcpy(h, &v, sizeof h);
  for (int w = kVec / 2; w > 0; w /= 2)
    for (int j = 0; j < w; ++j) h[j] += h[j + w];
  return s + h[0];
}

template <class T>
double seg_sum(const T* p, int64_t n) {
  VecD acc[kVecs] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int v = 0; v < kVecs; ++v) {
      VecD x;
      load_wide(p + i + v * kVec, x);
      acc[v] += x;
    }
  double s = 0;
  for (; i < n; ++i) s += convert_value<double>(p[i]);
  return add_lanes(s, acc);
}

template <class T>
double seg_sqdev(const T* p, int64_t n, double mean) {
  VecD acc[kVecs] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int v = 0; v < kVecs; ++v) {
      VecD d;
      load_wide(p + i + v * kVec, d);
      d -= mean;
      acc[v] += d * d;
    }
  double s = 0;
  for (; i < n; ++i) {
    const double d = convert_value<double>(p[i]) - mean;
    s += d * d;
  }
  return add_lanes(s, acc);
}

// The layout BatchNorm sees: x is [n, c, plane], c the channel axis's size, n the product of
// the dims before it and plane of those after it.
struct BnDims {
  int64_t n, c, plane;
};
BnDims bn_dims(const TensorRef& x, int64_t axis) {
  const std::span<const int64_t> s(x.shape());
  return {numel(s.first(axis)), s[axis], numel(s.subspan(axis + 1))};
}

// plane > 1: each channel is n contiguous planes.
template <class X>
void bn_stats_planes(const X* x, BnDims d, int64_t c0, int64_t c1, double* mean, double* var) {
  const double count = static_cast<double>(d.n * d.plane);
  for (int64_t c = c0; c < c1; ++c) {
    double sum = 0;
    for (int64_t i = 0; i < d.n; ++i) sum += seg_sum(x + (i * d.c + c) * d.plane, d.plane);
    const double m = sum / count;
    double sq = 0;
    for (int64_t i = 0; i < d.n; ++i) sq += seg_sqdev(x + (i * d.c + c) * d.plane, d.plane, m);
    mean[c - c0] = m;
    var[c - c0] = sq / count;
  }
}

// y = x * scale + shift in T: the rounding this adds is of the order of x's own representation
// error relative to the channel's spread, so a double pass here would buy nothing.
template <class T, class X>
void bn_apply(const X* x, T* y, BnDims d, int64_t c0, int64_t c1, const T* scale, const T* shift) {
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t i = 0; i < d.n; ++i) {
      const int64_t off = (i * d.c + c) * d.plane;
      const T a = scale[c - c0], b = shift[c - c0];
      in_wide_chunks(x + off, d.plane, [&](auto xs, int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; ++e) y[off + e] = std::fma(load_as<T>(xs, e - e0), a, b);
      });
    }
}

// Per channel: the statistics' outputs, and y = x * scale + shift's coefficients in T.
template <class T>
struct BnChannelOut {
  const T *gamma, *beta, *running_mean, *running_var;
  T *mean_out, *invstd_out, *running_mean_out, *running_var_out;
  double eps, momentum, unbiased;

  void set(int64_t k, double mean, double var, T* scale, T* shift) const {
    const double invstd = 1.0 / std::sqrt(var + eps);
    const double sc = gamma[k] * invstd;
    *scale = static_cast<T>(sc);
    *shift = static_cast<T>(beta[k] - mean * sc);
    mean_out[k] = static_cast<T>(mean);
    invstd_out[k] = static_cast<T>(invstd);
    // In f64 from the f64 statistics, rounded once.
    running_mean_out[k] =
        static_cast<T>((1 - momentum) * static_cast<double>(running_mean[k]) + momentum * mean);
    running_var_out[k] = static_cast<T>((1 - momentum) * static_cast<double>(running_var[k]) +
                                        momentum * var * unbiased);
  }
};

// plane == 1: x is rows of channels ([N, C], or channels-last images), norm_rows.h's passes.
// The statistics in one pass, shifted by x's first row (norm_rows.h), instead of the two passes
// of the planes: x comes from a convolution and is read from memory, not cache.
template <class T, class X>
void batch_norm_rows(const X* x, T* y, BnDims d, const BnChannelOut<T>& ch) {
  std::vector<double> sum_d(d.c), sum_d2(d.c);
  if (d.n > 0) row_channel_moments(x, d.n, d.c, x, sum_d.data(), sum_d2.data());
  std::vector<T> scale(d.c), shift(d.c);
  const double n = static_cast<double>(d.n);
  for (int64_t j = 0; j < d.c; ++j) {
    const double m = d.n > 0 ? sum_d[j] / n : NAN;
    const double first = d.n > 0 ? convert_value<double>(x[j]) : 0.0;
    const double var = d.n > 0 ? std::max(0.0, sum_d2[j] / n - m * m) : NAN;
    ch.set(j, first + m, var, &scale[j], &shift[j]);
  }
  row_channel_affine(x, y, d.n, d.c, scale.data(), shift.data());
}

// T is the dtype of the parameters and results, X that of x (T, or bf16 or f16 read widened).
template <class T, class X>
void batch_norm_t(const ir::BatchNormAttrs& attrs, Ins in, Outs out) {
  const BnDims d = bn_dims(in[0], attrs.axis);
  const X* x = in[0].as<X>();
  const T* gamma = in[1].as<T>();
  const T* beta = in[2].as<T>();
  const T* running_mean = in[3].as<T>();
  const T* running_var = in[4].as<T>();
  T* mean_out = out[1].as<T>();
  T* invstd_out = out[2].as<T>();
  T* running_mean_out = out[3].as<T>();
  T* running_var_out = out[4].as<T>();
  const double eps = attrs.eps, momentum = attrs.momentum;
  // PyTorch keeps the unbiased variance; one value per channel has none, and keeps the biased.
  const double count = static_cast<double>(d.n * d.plane);
  const double unbiased = count > 1 ? count / (count - 1) : 1.0;
  const BnChannelOut<T> ch{gamma,      beta, running_mean, running_var, mean_out, invstd_out,
                           running_mean_out, running_var_out, eps, momentum, unbiased};
  if (d.plane == 1) return batch_norm_rows(x, out[0].as<T>(), d, ch);
  // Channels are independent, so splitting over them needs no cross-thread reduction and the
  // result does not depend on the thread count.
  parallel_for(d.c, grain_for(d.n * d.plane), [&](int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    std::vector<double> mean(w), var(w);
    bn_stats_planes(x, d, c0, c1, mean.data(), var.data());
    std::vector<T> scale(w), shift(w);
    for (int64_t j = 0; j < w; ++j) ch.set(c0 + j, mean[j], var[j], &scale[j], &shift[j]);
    bn_apply(x, out[0].as<T>(), d, c0, c1, scale.data(), shift.data());
  });
}

template <class T>
void layer_norm_t(double eps, Ins in, Outs out) {
  const int64_t k = in[1].numel();  // elements per normalized row
  const int64_t rows = out[1].numel();
  const T* x = in[0].as<T>();
  const CArrMap<T> gamma(in[1].as<T>(), k);
  const CArrMap<T> beta(in[2].as<T>(), k);
  T* y = out[0].as<T>();
  T* mean_out = out[1].as<T>();
  T* rstd_out = out[2].as<T>();
  parallel_for(rows, grain_for(k), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * k;
      const double mean = seg_sum(xr, k) / static_cast<double>(k);
      const double rstd = 1.0 / std::sqrt(seg_sqdev(xr, k, mean) / static_cast<double>(k) + eps);
      mean_out[r] = static_cast<T>(mean);
      rstd_out[r] = static_cast<T>(rstd);
      const T a = static_cast<T>(rstd), b = static_cast<T>(-mean * rstd);
      ArrMap<T>(y + r * k, k) = (CArrMap<T>(xr, k) * a + b) * gamma + beta;
    }
  });
}

// Sum of gy and of gy * (x - mean) over a segment, in double (see seg_sum).
template <class T, class X>
void seg_grad_sums(const T* gy, const X* x, int64_t n, double mean, double* sum_gy,
                   double* sum_gy_dev) {
  VecD a[kVecs] = {}, b[kVecs] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int v = 0; v < kVecs; ++v) {
      VecD g, d;
      load_wide(gy + i + v * kVec, g);
      load_wide(x + i + v * kVec, d);
      a[v] += g;
      b[v] += g * (d - mean);
    }
  for (; i < n; ++i) {
    *sum_gy += gy[i];
    *sum_gy_dev += gy[i] * (convert_value<double>(x[i]) - mean);
  }
  *sum_gy = add_lanes(*sum_gy, a);
  *sum_gy_dev = add_lanes(*sum_gy_dev, b);
}

// The input gradient of y = gamma * xhat + beta with batch statistics, xhat = (x - mean) *
// invstd over m = N * plane values per channel:
//   dbeta = sum(gy), dgamma = sum(gy * xhat),
//   dx = gamma * invstd * (gy - dbeta / m - xhat * dgamma / m).
// Two passes over x and gy per channel (the sums, then dx), channels split across threads.
// T and X as batch_norm_t's; D is dx's type, T or bf16 (dx in T rounded, as a cast rounds).
template <class T, class X, class D>
void batch_norm_grad_t(int64_t axis, Ins in, Outs out) {
  const BnDims d = bn_dims(in[0], axis);
  const X* x = in[0].as<X>();
  const T* gamma = in[1].as<T>();
  const T* mean = in[2].as<T>();
  const T* invstd = in[3].as<T>();
  const T* gy = in[4].as<T>();
  D* dx = out[0].as<D>();
  T* dgamma = out[1].as<T>();
  T* dbeta = out[2].as<T>();
  const double m = static_cast<double>(d.n * d.plane);
  // dx = a * gy + (x - mean) * b + c, with the coefficients in double, rounded once.
  auto coefficients = [&](int64_t k, double sum_gy, double sum_gy_dev, T* a, T* b, T* c) {
    const double is = invstd[k], sgx = sum_gy_dev * is;
    dbeta[k] = static_cast<T>(sum_gy);
    dgamma[k] = static_cast<T>(sgx);
    const double g = gamma[k] * is;
    *a = static_cast<T>(g);
    *b = static_cast<T>(-g * is * sgx / m);
    *c = static_cast<T>(-g * sum_gy / m);
  };
  if (d.plane == 1) {  // rows of channels: norm_rows.h's sums, then dx
    std::vector<double> sum_gy(d.c), sum_gy_dev(d.c);
    row_channel_grad_sums(gy, x, d.n, d.c, mean, sum_gy.data(), sum_gy_dev.data());
    std::vector<T> a(d.c), b(d.c), c(d.c);
    for (int64_t j = 0; j < d.c; ++j)
      coefficients(j, sum_gy[j], sum_gy_dev[j], &a[j], &b[j], &c[j]);
    row_channel_grad_apply(gy, x, dx, d.n, d.c, a.data(), mean, b.data(), c.data());
    return;
  }
  parallel_for(d.c, grain_for(d.n * d.plane), [&](int64_t c0, int64_t c1) {
    const int64_t w = c1 - c0;
    std::vector<double> sum_gy(w), sum_gy_dev(w);
    for (int64_t j = 0; j < w; ++j)
      for (int64_t i = 0; i < d.n; ++i) {
        const int64_t off = (i * d.c + c0 + j) * d.plane;
        seg_grad_sums(gy + off, x + off, d.plane, mean[c0 + j], &sum_gy[j], &sum_gy_dev[j]);
      }
    std::vector<T> a(w), b(w), c(w);
    for (int64_t j = 0; j < w; ++j)
      coefficients(c0 + j, sum_gy[j], sum_gy_dev[j], &a[j], &b[j], &c[j]);
    for (int64_t i = 0; i < d.n; ++i)  // one plane per channel
      for (int64_t j = 0; j < w; ++j) {
        const int64_t off = (i * d.c + c0 + j) * d.plane;
        const T aj = a[j], bj = b[j], cj = c[j], mj = mean[c0 + j];
        in_wide_chunks(x + off, d.plane, [&](auto xs, int64_t e0, int64_t e1) {
          for (int64_t e = e0; e < e1; ++e)
            store_as(dx, off + e,
                     std::fma(gy[off + e], aj, std::fma(load_as<T>(xs, e - e0) - mj, bj, cj)));
        });
      }
  });
}

// Per row of layer_norm_grad, in double: s1 = sum(g), s2 = sum(g * (x - mean)), g = gy * gamma;
// and the row's terms of dgamma and dbeta, added to pg and pb.
template <class T>
void layer_norm_row_sums(const T* gy, const T* x, const T* gamma, int64_t k, double mean,
                         double rstd, double* s1, double* s2, double* pg, double* pb) {
  VecD a[kVecs] = {}, b[kVecs] = {};
  int64_t i = 0;
  for (; i + kLanes <= k; i += kLanes)
    for (int v = 0; v < kVecs; ++v) {
      VecD g, gm, d;
      load_wide(gy + i + v * kVec, g);
      load_wide(gamma + i + v * kVec, gm);
      load_wide(x + i + v * kVec, d);
      g *= gm;
      a[v] += g;
      b[v] += g * (d - mean);
    }
  for (; i < k; ++i) {
    const double g = static_cast<double>(gy[i]) * gamma[i];
    *s1 += g;
    *s2 += g * (x[i] - mean);
  }
  *s1 = add_lanes(*s1, a);
  *s2 = add_lanes(*s2, b);
  for (int64_t j = 0; j < k; ++j) {
    pg[j] += gy[j] * ((x[j] - mean) * rstd);
    pb[j] += gy[j];
  }
}

// The gradient of y = gamma * xhat + beta, xhat = (x - mean) * rstd over rows of k values:
//   dbeta = sum over rows of gy, dgamma = sum over rows of gy * xhat,
//   dx = rstd * (g - sum(g) / k - xhat * sum(g * xhat) / k), g = gy * gamma.
// One pass for a row's sums, one for its dx (a row is in cache by then). Rows go in chunks set
// by the row count alone, whose dgamma and dbeta partials are added in chunk order: the result
// does not depend on the thread count.
template <class T>
void layer_norm_grad_t(Ins in, Outs out) {
  const int64_t k = in[1].numel(), rows = in[2].numel();
  const T* x = in[0].as<T>();
  const T* gamma = in[1].as<T>();
  const T* mean = in[2].as<T>();
  const T* rstd = in[3].as<T>();
  const T* gy = in[4].as<T>();
  T* dx = out[0].as<T>();
  constexpr int64_t kMaxChunks = 64;  // bounds the partials at 2 * 64 * k doubles
  const int64_t chunk_rows = std::max<int64_t>(8, (rows + kMaxChunks - 1) / kMaxChunks);
  const int64_t chunks = (rows + chunk_rows - 1) / chunk_rows;
  std::vector<double> partial(static_cast<size_t>(2 * chunks * k));
  parallel_for(chunks, grain_for(chunk_rows * k), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      double* pg = partial.data() + 2 * c * k;
      double* pb = pg + k;
      for (int64_t r = c * chunk_rows; r < std::min(rows, (c + 1) * chunk_rows); ++r) {
        const T *xr = x + r * k, *gr = gy + r * k;
        const double mu = mean[r], rs = rstd[r];
        double s1 = 0, s2 = 0;
        layer_norm_row_sums(gr, xr, gamma, k, mu, rs, &s1, &s2, pg, pb);
        // dx = a * gy * gamma + (x - mean) * b + c, the coefficients in double, rounded once.
        const double kd = static_cast<double>(k);
        const T a = static_cast<T>(rs), b = static_cast<T>(-rs * rs * rs * s2 / kd),
                cc = static_cast<T>(-rs * s1 / kd), m = static_cast<T>(mu);
        ArrMap<T>(dx + r * k, k) = CArrMap<T>(gr, k) * CArrMap<T>(gamma, k) * a +
                                   (CArrMap<T>(xr, k) - m) * b + cc;
      }
    }
  });
  T* dgamma = out[1].as<T>();
  T* dbeta = out[2].as<T>();
  for (int64_t j = 0; j < k; ++j) {
    double g = 0, b = 0;
    for (int64_t c = 0; c < chunks; ++c) {
      g += partial[2 * c * k + j];
      b += partial[(2 * c + 1) * k + j];
    }
    dgamma[j] = static_cast<T>(g);
    dbeta[j] = static_cast<T>(b);
  }
}

}  // namespace

/// Calls f(T{}, X{}): T the dtype of gamma (operand 1), X that of x (operand 0), which the type
/// rule lets be bf16 or f16 where T is f32.
template <class F>
void dispatch_norm(Ins in, F&& f) {
  if (in[1].dtype() == DType::F64) return f(double{}, double{});
  if (in[0].dtype() == DType::BF16) return f(float{}, Eigen::bfloat16{});
  if (in[0].dtype() == DType::F16) return f(float{}, Eigen::half{});
  return f(float{}, float{});
}

void batch_norm_grad(int64_t axis, Ins in, Outs out) {
  dispatch_norm(in, [&](auto t, auto x) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, float>)
      if (out[0].dtype() == DType::BF16)
        return batch_norm_grad_t<T, decltype(x), Eigen::bfloat16>(axis, in, out);
    batch_norm_grad_t<T, decltype(x), T>(axis, in, out);
  });
}

void batch_norm(const ir::BatchNormAttrs& attrs, Ins in, Outs out) {
  dispatch_norm(in, [&](auto t, auto x) {
    batch_norm_t<decltype(t), decltype(x)>(attrs, in, out);
  });
}

void layer_norm(double eps, Ins in, Outs out) {
  dispatch_float(in[0].dtype(), [&](auto t) { layer_norm_t<decltype(t)>(eps, in, out); });
}

void layer_norm_grad(Ins in, Outs out) {
  dispatch_float(in[0].dtype(), [&](auto t) { layer_norm_grad_t<decltype(t)>(in, out); });
}

}  // namespace lt::rt
