// The fused nn kernels against naive references written here in double (long double where the
// reference takes exp of large logits directly), in f32 and f64, i32 and i64 ids.
#include <gtest/gtest.h>

#include <bit>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/type_rules.h"
#include "runtime/kernels/kernel.h"
#include "runtime/thread_pool.h"

#include "tests/unit/runtime/host_tensor.h"

namespace lt {
namespace {

using testing::Aligned64;

using ir::Op;
using Vals = std::vector<double>;

// The softmax and cross-entropy references take exp(1000) without shifting: x87 long double
// reaches 1e4932, so the reference does not rely on the trick it is checking.
static_assert(std::numeric_limits<long double>::max_exponent10 >= 4000);

using Bytes = std::vector<std::byte, Aligned64<std::byte>>;

struct Buf {
  TensorType type;
  Bytes bytes;
};

Buf make(DType dt, Shape shape, const Vals& v) {
  Buf b{{dt, std::move(shape)}, {}};
  b.bytes.resize(b.type.bytes());
  EXPECT_EQ(static_cast<int64_t>(v.size()), b.type.numel());
  rt::dispatch_dtype(dt, [&](auto z) {
    auto* p = reinterpret_cast<decltype(z)*>(b.bytes.data());
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<decltype(z)>(v[i]);
  });
  return b;
}

Vals values(const Buf& b) {
  Vals v(b.type.numel());
  rt::dispatch_dtype(b.type.dtype, [&](auto z) {
    auto* p = reinterpret_cast<const decltype(z)*>(b.bytes.data());
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(p[i]);
  });
  return v;
}

// The inputs as the kernel sees them (rounded to f32), so references start from the same numbers.
Vals rounded(DType dt, const Vals& v) {
  return values(make(dt, {static_cast<int64_t>(v.size())}, v));
}

Vals randu(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Vals v(n);
  for (double& x : v) x = u(rng);
  return v;
}

Vals rand_ids(int64_t n, int64_t limit, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> u(0, limit - 1);
  Vals v(n);
  for (double& x : v) x = static_cast<double>(u(rng));
  return v;
}

// Runs op through run_nn with outputs typed by infer_types and prefilled with 0xff bytes (NaN for
// floats), so an element the kernel forgets to write fails the comparison.
std::vector<Buf> run(Op op, const std::vector<Buf>& in, const ir::Attrs& attrs) {
  std::vector<TensorType> types;
  for (const Buf& b : in) types.push_back(b.type);
  std::vector<Buf> out;
  for (const TensorType& t : ir::infer_types(op, types, attrs))
    out.push_back({t, Bytes(t.bytes(), std::byte{0xff})});
  std::vector<rt::TensorRef> in_refs, out_refs;
  for (const Buf& b : in) in_refs.push_back({const_cast<std::byte*>(b.bytes.data()), &b.type});
  for (Buf& b : out) out_refs.push_back({b.bytes.data(), &b.type});
  rt::run_nn(*ir::as_nn(op), attrs, in_refs, out_refs);
  return out;
}

std::string error_of(Op op, const std::vector<Buf>& in, const ir::Attrs& attrs) {
  try {
    run(op, in, attrs);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

double tol(DType dt) { return dt == DType::F32 ? 2e-5 : 1e-11; }

void expect_close(const Vals& got, const Vals& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i]))) && bad++ < 5)
      ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
}

// ---- references ----

struct NormRef {
  Vals y, mean, inv;
};

// Statistics of the elements idx(0..count) with the biased variance.
template <class Idx>
void norm_group(const Vals& x, int64_t count, Idx idx, double eps, double* mean, double* inv) {
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < count; ++i) sum += x[idx(i)];
  *mean = sum / count;
  for (int64_t i = 0; i < count; ++i) sq += (x[idx(i)] - *mean) * (x[idx(i)] - *mean);
  *inv = 1 / std::sqrt(sq / count + eps);
}

NormRef batch_norm_ref(const Vals& x, const Shape& s, const Vals& g, const Vals& b, double eps) {
  const int64_t n = s[0], c = s[1], plane = numel(s) / (n * c);
  NormRef r{Vals(x.size()), Vals(c), Vals(c)};
  for (int64_t ch = 0; ch < c; ++ch) {
    auto idx = [&](int64_t i) { return ((i / plane) * c + ch) * plane + i % plane; };
    norm_group(x, n * plane, idx, eps, &r.mean[ch], &r.inv[ch]);
    for (int64_t i = 0; i < n * plane; ++i)
      r.y[idx(i)] = (x[idx(i)] - r.mean[ch]) * r.inv[ch] * g[ch] + b[ch];
  }
  return r;
}

NormRef layer_norm_ref(const Vals& x, const Vals& g, const Vals& b, double eps) {
  const int64_t k = static_cast<int64_t>(g.size()), rows = static_cast<int64_t>(x.size()) / k;
  NormRef r{Vals(x.size()), Vals(rows), Vals(rows)};
  for (int64_t row = 0; row < rows; ++row) {
    auto idx = [&](int64_t i) { return row * k + i; };
    norm_group(x, k, idx, eps, &r.mean[row], &r.inv[row]);
    for (int64_t i = 0; i < k; ++i)
      r.y[idx(i)] = (x[idx(i)] - r.mean[row]) * r.inv[row] * g[i] + b[i];
  }
  return r;
}

Vals softmax_ref(const Vals& x, const Shape& s, int64_t axis, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t n = s[axis];
  Vals y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto idx = [&](int64_t k) { return (o * n + k) * inner + j; };
      long double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<long double>(x[idx(k)]));
      for (int64_t k = 0; k < n; ++k)
        y[idx(k)] = log ? static_cast<double>(x[idx(k)] - std::log(sum))
                        : static_cast<double>(std::exp(static_cast<long double>(x[idx(k)])) / sum);
    }
  return y;
}

double cross_entropy_ref(const Vals& x, const Vals& labels, int64_t c, double ls) {
  const int64_t n = static_cast<int64_t>(labels.size());
  long double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    long double sum = 0, sum_logp = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<long double>(x[i * c + j]));
    for (int64_t j = 0; j < c; ++j) sum_logp += x[i * c + j] - std::log(sum);
    const long double logp = x[i * c + static_cast<int64_t>(labels[i])] - std::log(sum);
    total += -((1 - ls) * logp + ls / c * sum_logp);
  }
  return static_cast<double>(total / n);
}

constexpr DType kFloats[] = {DType::F32, DType::F64};
constexpr DType kIds[] = {DType::I32, DType::I64};

// ---- tests ----

/// s seen by a batch norm over channel axis `axis`: [outer, C, inner], the references' layout.
Shape around_axis(const Shape& s, int64_t axis) {
  const std::span<const int64_t> d(s);
  return {numel(d.first(axis)), s[axis], numel(d.subspan(axis + 1))};
}

void check_batch_norm(DType dt, const Shape& s, const Vals& x0, double y_tol, double stat_tol,
                      int64_t axis = 1) {
  const int64_t c = s[axis];
  const Vals x = rounded(dt, x0), g = rounded(dt, randu(c, 0.5, 2, 2)),
             b = rounded(dt, randu(c, -1, 1, 3));
  const Vals rm = rounded(dt, randu(c, -1, 1, 8)), rv = rounded(dt, randu(c, 0.5, 2, 9));
  const ir::BatchNormAttrs attrs{1e-5, 0.25, axis};
  auto out = run(Op::BatchNorm,
                 {make(dt, s, x), make(dt, {c}, g), make(dt, {c}, b), make(dt, {c}, rm),
                  make(dt, {c}, rv)},
                 attrs);
  const NormRef r = batch_norm_ref(x, around_axis(s, axis), g, b, attrs.eps);
  expect_close(values(out[0]), r.y, y_tol, "y");
  expect_close(values(out[1]), r.mean, stat_tol, "mean");
  expect_close(values(out[2]), r.inv, stat_tol, "invstd");
  // Running statistics: PyTorch's update, the unbiased variance from the reference's biased one.
  const double count = static_cast<double>(numel(s) / c);
  Vals want_rm(c), want_rv(c);
  for (int64_t k = 0; k < c; ++k) {
    const double var = 1 / (r.inv[k] * r.inv[k]) - attrs.eps;
    want_rm[k] = 0.75 * rm[k] + 0.25 * r.mean[k];
    want_rv[k] = 0.75 * rv[k] + 0.25 * var * count / (count - 1);
  }
  expect_close(values(out[3]), want_rm, stat_tol, "running_mean");
  expect_close(values(out[4]), want_rv, stat_tol, "running_var");
}

TEST(BatchNormKernel, MatchesReferenceOnRank2AndRank4) {
  for (DType dt : kFloats)
    for (const Shape& s : {Shape{7, 5}, Shape{3, 4, 5, 6}, Shape{8, 3, 64, 64}, Shape{4096, 24}}) {
      SCOPED_TRACE(type_str({dt, s}));
      check_batch_norm(dt, s, randu(numel(s), -3, 3, 1), tol(dt), tol(dt));
    }
}

TEST(BatchNormKernel, ChannelsLastMatchesReference) {
  // Channel axis 3 of [N, H, W, C]: rows of C channels; 20 channels are two full vectors of 8
  // and 4 more.
  for (DType dt : kFloats)
    for (const Shape& s : {Shape{3, 5, 7, 20}, Shape{32, 16, 16, 16}, Shape{2, 3, 3, 3}}) {
      SCOPED_TRACE(type_str({dt, s}));
      check_batch_norm(dt, s, randu(numel(s), -3, 3, 5), tol(dt), tol(dt), 3);
    }
}

/// batch_norm_grad against the formula in f64: dbeta = sum(gy), dgamma = sum(gy * xhat),
/// dx = gamma * invstd * (gy - dbeta / m - xhat * dgamma / m), xhat = (x - mean) * invstd.
void check_batch_norm_grad(DType dt, const Shape& given, double mean_at, double tolerance,
                           int64_t axis = 1) {
  const Shape s = around_axis(given, axis);  // the kernel runs on `given`, the reference on s
  const int64_t c = s[1], plane = numel(s) / (s[0] * c), m = s[0] * plane;
  const Vals x = rounded(dt, randu(numel(s), mean_at - 2, mean_at + 2, 11));
  const Vals gy = rounded(dt, randu(numel(s), -1, 1, 12)), g = rounded(dt, randu(c, 0.5, 2, 13));
  const Vals mu = rounded(dt, randu(c, mean_at - 0.5, mean_at + 0.5, 14));
  const Vals is = rounded(dt, randu(c, 0.5, 2, 15));
  auto out = run(Op::BatchNormGrad,
                 {make(dt, given, x), make(dt, {c}, g), make(dt, {c}, mu), make(dt, {c}, is),
                  make(dt, given, gy)},
                 ir::BatchNormGradAttrs{axis});
  Vals dx(x.size()), dgamma(c), dbeta(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    auto idx = [&](int64_t i) { return ((i / plane) * c + ch) * plane + i % plane; };
    for (int64_t i = 0; i < m; ++i) {
      dbeta[ch] += gy[idx(i)];
      dgamma[ch] += gy[idx(i)] * (x[idx(i)] - mu[ch]) * is[ch];
    }
    for (int64_t i = 0; i < m; ++i)
      dx[idx(i)] = g[ch] * is[ch] *
                   (gy[idx(i)] - dbeta[ch] / m - (x[idx(i)] - mu[ch]) * is[ch] * dgamma[ch] / m);
  }
  expect_close(values(out[0]), dx, tolerance, "dx");
  expect_close(values(out[1]), dgamma, tolerance, "dgamma");
  expect_close(values(out[2]), dbeta, tolerance, "dbeta");
}

TEST(BatchNormGradKernel, MatchesTheFormulaOnRank2AndRank4) {
  for (DType dt : kFloats)
    for (const Shape& s : {Shape{7, 5}, Shape{3, 4, 5, 6}, Shape{8, 3, 33, 33}, Shape{4096, 24}}) {
      SCOPED_TRACE(type_str({dt, s}));
      check_batch_norm_grad(dt, s, 0, tol(dt));
    }
}

TEST(BatchNormKernel, EmptyRowsOrChannelsWriteNothingOutOfBounds) {
  // No channels, or no rows, on both layouts' paths (under ASan an overrun would be a report).
  for (const auto& [s, axis] : {std::pair{Shape{3, 0}, int64_t{1}}, {Shape{2, 3, 3, 0}, 3},
                                {Shape{0, 5}, 1}, {Shape{0, 2, 2, 4}, 3}, {Shape{0, 4, 2, 2}, 1}}) {
    SCOPED_TRACE(shape_str(s));
    const int64_t c = s[axis];
    auto out = run(Op::BatchNorm,
                   {make(DType::F32, s, Vals(numel(s), 1.0)), make(DType::F32, {c}, Vals(c, 1.0)),
                    make(DType::F32, {c}, Vals(c, 0.0)), make(DType::F32, {c}, Vals(c, 0.0)),
                    make(DType::F32, {c}, Vals(c, 1.0))},
                   ir::BatchNormAttrs{1e-5, 0.1, axis});
    EXPECT_EQ(out[0].type.numel(), numel(s));
    auto grad = run(Op::BatchNormGrad,
                    {make(DType::F32, s, Vals(numel(s), 1.0)), make(DType::F32, {c}, Vals(c, 1.0)),
                     make(DType::F32, {c}, Vals(c, 0.0)), make(DType::F32, {c}, Vals(c, 1.0)),
                     make(DType::F32, s, Vals(numel(s), 1.0))},
                    ir::BatchNormGradAttrs{axis});
    // No rows: the sums over them are 0.
    for (double v : values(grad[2])) EXPECT_EQ(v, 0.0);
  }
}

TEST(BatchNormGradKernel, ChannelsLastMatchesTheFormula) {
  for (DType dt : kFloats)
    for (const Shape& s : {Shape{3, 5, 7, 20}, Shape{32, 16, 16, 16}, Shape{2, 3, 3, 3}}) {
      SCOPED_TRACE(type_str({dt, s}));
      check_batch_norm_grad(dt, s, 0, tol(dt), 3);
    }
}

/// x rounded to the narrow float dt, as a buffer of dt and as its f32 widening.
std::pair<Buf, Buf> narrow_and_wide(DType dt, const Shape& s, const Vals& v) {
  Buf narrow{{dt, s}, {}}, wide{{DType::F32, s}, {}};
  narrow.bytes.resize(narrow.type.bytes());
  wide.bytes.resize(wide.type.bytes());
  auto* n = reinterpret_cast<uint16_t*>(narrow.bytes.data());
  auto* w = reinterpret_cast<float*>(wide.bytes.data());
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::F16) {  // the compiler's own half type, not the runtime's conversions
      const _Float16 h = static_cast<_Float16>(static_cast<float>(v[i]));
      std::memcpy(&n[i], &h, sizeof h);
      w[i] = static_cast<float>(h);
    } else {  // bf16: the top half of the f32 bits, rounded to nearest even
      uint32_t bits;
      const float f = static_cast<float>(v[i]);
      std::memcpy(&bits, &f, sizeof bits);
      n[i] = static_cast<uint16_t>((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
      const uint32_t back = static_cast<uint32_t>(n[i]) << 16;
      std::memcpy(&w[i], &back, sizeof back);
    }
  }
  return {std::move(narrow), std::move(wide)};
}

TEST(BatchNormKernel, NarrowInputGivesTheBitsOfItsWidening) {
  // What absorb_widening_casts relies on: batch_norm and its gradient on a bf16 or f16 x (f32
  // everything else) give the f32 results of x widened, bit for bit, on both layouts' paths
  // (planes, rows of 5 and of 16 channels, rows with a tail).
  for (DType dt : {DType::BF16, DType::F16})
    for (const auto& [s, axis] : {std::pair{Shape{3, 4, 5, 6}, int64_t{1}}, {Shape{8, 3, 33, 33}, 1},
                                  {Shape{7, 5}, 1}, {Shape{32, 16, 16, 16}, 3},
                                  {Shape{3, 5, 7, 20}, 3}}) {
      SCOPED_TRACE(type_str({dt, s}));
      const int64_t c = s[axis];
      const auto [narrow, wide] = narrow_and_wide(dt, s, randu(numel(s), -3, 3, 21));
      auto params = [&](std::vector<Buf> in) {
        in.push_back(make(DType::F32, {c}, randu(c, 0.5, 2, 22)));
        in.push_back(make(DType::F32, {c}, randu(c, -1, 1, 23)));
        in.push_back(make(DType::F32, {c}, randu(c, -1, 1, 24)));
        in.push_back(make(DType::F32, {c}, randu(c, 0.5, 2, 25)));
        return in;
      };
      const ir::BatchNormAttrs attrs{1e-5, 0.1, axis};
      const auto from_narrow = run(Op::BatchNorm, params({narrow}), attrs);
      const auto from_wide = run(Op::BatchNorm, params({wide}), attrs);
      ASSERT_EQ(from_narrow.size(), from_wide.size());
      for (size_t i = 0; i < from_wide.size(); ++i) {
        EXPECT_EQ(from_narrow[i].type, from_wide[i].type) << "output " << i;
        EXPECT_TRUE(from_narrow[i].bytes == from_wide[i].bytes) << "output " << i;
      }
      auto grad_in = [&](const Buf& x) {
        return std::vector<Buf>{x, make(DType::F32, {c}, randu(c, 0.5, 2, 26)), from_wide[1],
                                from_wide[2], make(DType::F32, s, randu(numel(s), -1, 1, 27))};
      };
      const auto g_narrow = run(Op::BatchNormGrad, grad_in(narrow), ir::BatchNormGradAttrs{axis});
      const auto g_wide = run(Op::BatchNormGrad, grad_in(wide), ir::BatchNormGradAttrs{axis});
      for (size_t i = 0; i < g_wide.size(); ++i) {
        EXPECT_EQ(g_narrow[i].type, g_wide[i].type) << "gradient output " << i;
        EXPECT_TRUE(g_narrow[i].bytes == g_wide[i].bytes) << "gradient output " << i;
      }
    }
}

TEST(BatchNormGradKernel, Bf16DxIsItsF32DxRoundedAsACastRoundsIt) {
  // What narrow_norm_gradients relies on: with bf16_dx the kernel writes each dx element as a
  // cast to bf16 rounds the f32 one (to nearest even, ties included; a NaN to the quiet NaN of
  // its sign), dgamma and dbeta unchanged, on both layouts' paths and for f32 and bf16 x.
  auto bf16_of = [](float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    if (f != f) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  };
  for (DType dt : {DType::F32, DType::BF16})
    for (const auto& [s, axis] : {std::pair{Shape{3, 4, 5, 6}, int64_t{1}}, {Shape{7, 5}, 1},
                                  {Shape{4, 8, 8, 16}, 3}, {Shape{3, 5, 7, 20}, 3}}) {
      SCOPED_TRACE(type_str({dt, s}));
      const int64_t c = s[axis];
      const Buf x = make(DType::F32, s, randu(numel(s), -3, 3, 31));
      const Buf xn = dt == DType::F32 ? x : narrow_and_wide(dt, s, values(x)).first;
      Vals gy = randu(numel(s), -1, 1, 32);
      for (size_t i = 7; i < gy.size(); i += 11) gy[i] = 1 + std::ldexp(1.0, -8);  // bf16 ties
      Buf gy_buf = make(DType::F32, s, gy);
      // A negative NaN with a payload: its channel's dx is all NaN, which must lose the payload.
      const uint32_t nan_bits = 0xffc12345u;
      std::memcpy(gy_buf.bytes.data() + 5 * sizeof(float), &nan_bits, sizeof nan_bits);
      const std::vector<Buf> in{xn, make(DType::F32, {c}, randu(c, 0.5, 2, 33)),
                                make(DType::F32, {c}, randu(c, -1, 1, 34)),
                                make(DType::F32, {c}, randu(c, 0.5, 2, 35)), gy_buf};
      const auto wide = run(Op::BatchNormGrad, in, ir::BatchNormGradAttrs{axis});
      const auto narrow = run(Op::BatchNormGrad, in, ir::BatchNormGradAttrs{axis, true});
      ASSERT_EQ(narrow[0].type, (TensorType{DType::BF16, s}));
      const auto* f = reinterpret_cast<const float*>(wide[0].bytes.data());
      const auto* h = reinterpret_cast<const uint16_t*>(narrow[0].bytes.data());
      int nans = 0;
      for (int64_t i = 0; i < numel(s); ++i) {
        nans += f[i] != f[i];
        ASSERT_EQ(h[i], bf16_of(f[i])) << "dx[" << i << "] = " << f[i];
      }
      EXPECT_GT(nans, 0);
      EXPECT_TRUE(narrow[1].bytes == wide[1].bytes && narrow[2].bytes == wide[2].bytes);
    }
}

TEST(BatchNormGradKernel, F32KeepsItsDigitsForLargeMean) {
  // x near 1000: x - mean is taken before any product, so nothing cancels.
  check_batch_norm_grad(DType::F32, {16, 4, 8, 8}, 1000, 1e-4);
}

/// layer_norm_grad against the formula in f64 over rows of k = numel(g_shape) values:
/// dbeta = sum over rows of gy, dgamma = sum over rows of gy * xhat,
/// dx = rstd * (g - sum(g) / k - xhat * sum(g * xhat) / k), g = gy * gamma.
void check_layer_norm_grad(DType dt, const Shape& s, const Shape& g_shape, double mean_at,
                           double tolerance) {
  const int64_t k = numel(g_shape), rows = numel(s) / k;
  const Shape stats(s.begin(), s.end() - static_cast<std::ptrdiff_t>(g_shape.size()));
  const Vals x = rounded(dt, randu(numel(s), mean_at - 2, mean_at + 2, 21));
  const Vals gy = rounded(dt, randu(numel(s), -1, 1, 22)), g = rounded(dt, randu(k, 0.5, 2, 23));
  const Vals mu = rounded(dt, randu(rows, mean_at - 0.5, mean_at + 0.5, 24));
  const Vals rs = rounded(dt, randu(rows, 0.5, 2, 25));
  auto out = run(Op::LayerNormGrad,
                 {make(dt, s, x), make(dt, g_shape, g), make(dt, stats, mu), make(dt, stats, rs),
                  make(dt, s, gy)},
                 ir::NoAttrs{});
  Vals dx(x.size()), dgamma(k), dbeta(k);
  for (int64_t r = 0; r < rows; ++r) {
    double s1 = 0, s2 = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = (x[r * k + j] - mu[r]) * rs[r], gj = gy[r * k + j] * g[j];
      s1 += gj;
      s2 += gj * xhat;
      dgamma[j] += gy[r * k + j] * xhat;
      dbeta[j] += gy[r * k + j];
    }
    for (int64_t j = 0; j < k; ++j) {
      const double xhat = (x[r * k + j] - mu[r]) * rs[r];
      dx[r * k + j] = rs[r] * (gy[r * k + j] * g[j] - s1 / k - xhat * s2 / k);
    }
  }
  expect_close(values(out[0]), dx, tolerance, "dx");
  expect_close(values(out[1]), dgamma, tolerance, "dgamma");
  expect_close(values(out[2]), dbeta, tolerance, "dbeta");
}

TEST(LayerNormGradKernel, MatchesTheFormula) {
  for (DType dt : kFloats)
    for (const auto& [s, g] : std::vector<std::pair<Shape, Shape>>{{{7, 5}, {5}},
                                                                  {{3, 4, 6}, {4, 6}},
                                                                  {{16, 64, 128}, {128}},
                                                                  {{4099, 24}, {24}},
                                                                  {{9}, {9}}}) {
      SCOPED_TRACE(type_str({dt, s}));
      check_layer_norm_grad(dt, s, g, 0, tol(dt));
    }
}

TEST(LayerNormGradKernel, F32KeepsItsDigitsForLargeMean) {
  check_layer_norm_grad(DType::F32, {64, 256}, {256}, 1000, 1e-4);
}

TEST(BatchNormKernel, F32StatisticsStayAccurateForLargeMean) {
  // mean 1000, spread 1: a float accumulator or E[x^2] - E[x]^2 loses most digits of the variance.
  for (const Shape& s : {Shape{64, 4, 16, 16}, Shape{65536, 2}}) {
    SCOPED_TRACE(shape_str(s));
    check_batch_norm(DType::F32, s, randu(numel(s), 999, 1001, 4), 5e-4, 1e-6);
  }
  check_batch_norm(DType::F32, {64, 16, 16, 4}, randu(64 * 16 * 16 * 4, 999, 1001, 4), 5e-4, 1e-6,
                   3);
}

TEST(LayerNormKernel, MatchesReferenceOverOneAndTwoTrailingDims) {
  struct Case {
    Shape x, g;
  };
  const Case cases[] = {
      {{4, 6, 8}, {8}}, {{4, 6, 8}, {6, 8}}, {{5, 7}, {5, 7}}, {{300, 256}, {256}}};
  for (DType dt : kFloats)
    for (const Case& cs : cases) {
      SCOPED_TRACE(type_str({dt, cs.x}) + " over " + shape_str(cs.g));
      const int64_t k = numel(cs.g);
      const Vals x = rounded(dt, randu(numel(cs.x), 5, 9, 5));
      const Vals g = rounded(dt, randu(k, 0.5, 2, 6)), b = rounded(dt, randu(k, -1, 1, 7));
      const ir::NormAttrs attrs{1e-5};
      auto out =
          run(Op::LayerNorm, {make(dt, cs.x, x), make(dt, cs.g, g), make(dt, cs.g, b)}, attrs);
      const NormRef r = layer_norm_ref(x, g, b, attrs.eps);
      EXPECT_EQ(out[1].type.shape, Shape(cs.x.begin(), cs.x.end() - cs.g.size()));
      expect_close(values(out[0]), r.y, tol(dt), "y");
      expect_close(values(out[1]), r.mean, tol(dt), "mean");
      expect_close(values(out[2]), r.inv, tol(dt), "rstd");
    }
}

void check_softmax(DType dt, const Shape& s, int64_t axis, const Vals& x0) {
  const Vals x = rounded(dt, x0);
  for (Op op : {Op::Softmax, Op::LogSoftmax}) {
    SCOPED_TRACE(std::string(ir::mnemonic(op)) + " " + type_str({dt, s}) + " axis " +
                 std::to_string(axis));
    auto out = run(op, {make(dt, s, x)}, ir::AxisAttrs{axis});
    expect_close(values(out[0]), softmax_ref(x, s, axis, op == Op::LogSoftmax), tol(dt), "y");
  }
}

TEST(SoftmaxKernel, MatchesReferenceOnEveryAxis) {
  for (DType dt : kFloats) {
    for (int64_t axis : {0, 1, 2}) check_softmax(dt, {5, 7, 9}, axis, randu(315, -4, 4, 8));
    check_softmax(dt, {2, 3, 600}, 1, randu(3600, -4, 4, 9));  // inner spans several tiles
    check_softmax(dt, {3, 200, 2}, 1, randu(1200, -4, 4, 10));
    check_softmax(dt, {300, 200}, 1, randu(60000, -4, 4, 11));  // rows split across threads
    check_softmax(dt, {8, 40, 300}, 1, randu(96000, -4, 4, 12));
    check_softmax(dt, {9, 4, 64}, 2, randu(2304, -4, 4, 13));  // rows of 64: 4 side by side
    check_softmax(dt, {5, 256}, 1, randu(1280, -8, 8, 14));
  }
}

TEST(SoftmaxKernel, LargeLogitsStayFinite) {
  Vals x = randu(4 * 33, -5, 5, 13);
  for (size_t i = 0; i < x.size(); ++i) x[i] += i < 66 ? 1000 : -1000;  // rows near +-1000
  for (DType dt : kFloats) {
    check_softmax(dt, {4, 33}, 1, x);
    check_softmax(dt, {4, 33}, 0, x);
    auto out = run(Op::Softmax, {make(dt, {4, 33}, rounded(dt, x))}, ir::AxisAttrs{1});
    const Vals y = values(out[0]);
    for (int r = 0; r < 4; ++r) {
      double sum = 0;
      for (int j = 0; j < 33; ++j) sum += y[r * 33 + j];
      EXPECT_NEAR(sum, 1, 1e-5) << "row " << r;
    }
  }
}

// A causal mask's -1e9 (or -inf) logits, and one 800 below its row's max (past f64's exp range),
// give a probability of exactly 0, never a subnormal (which slows every later kernel on Intel
// cores), on the contiguous and the strided layout; the rest still matches the reference.
TEST(SoftmaxKernel, MaskedLogitsGiveExactZeros) {
  const double inf = std::numeric_limits<double>::infinity();
  // 20 columns, and 64 (f32 rows of a multiple of 16 go 4 rows side by side: softmax_rows.cpp,
  // with 7 rows so that a block of 4 and 3 single rows run).
  for (const auto& [rows, cols] : {std::pair{3, 20}, {7, 64}})
    for (DType dt : kFloats)
      for (int64_t axis : {1, 0}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " axis " + std::to_string(axis) + " cols " +
                     std::to_string(cols));
        // Row r keeps r + 1 entries; the rest are masked.
        Vals x = randu(rows * cols, -4, 4, 15);
        for (int r = 0; r < rows; ++r)
          for (int j = r + 1; j < cols; ++j)
            x[r * cols + j] = j == cols - 1 ? -inf : j % 2 ? -1e9 : -800;
        const Shape s = axis == 1 ? Shape{rows, cols} : Shape{cols, rows};
        Vals xs = x;  // axis 0: the transpose, so each softmax runs down a column
        if (axis == 0)
          for (int r = 0; r < rows; ++r)
            for (int j = 0; j < cols; ++j) xs[j * rows + r] = x[r * cols + j];
        auto out = run(Op::Softmax, {make(dt, s, rounded(dt, xs))}, ir::AxisAttrs{axis});
        const Vals y = values(out[0]);
        expect_close(y, softmax_ref(rounded(dt, xs), s, axis, false), tol(dt), "y");
        for (int r = 0; r < rows; ++r)
          for (int j = r + 1; j < cols; ++j) {
            const double v = y[axis == 1 ? r * cols + j : j * rows + r];
            ASSERT_EQ(v, 0.0) << "row " << r << " col " << j;
          }
      }
}

TEST(SoftmaxKernel, NaNAndAllMaskedRowsGiveNaNRows) {
  // A row with a NaN, or with every logit -inf (max - max is NaN), gives NaN throughout, as
  // PyTorch's softmax does; the other rows are untouched by them. Rows of 5 and of 32.
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t cols : {5, 32})
    for (DType dt : kFloats) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " cols " + std::to_string(cols));
      Vals x = randu(6 * cols, -4, 4, 16);
      x[1 * cols + 2] = std::nan("");
      for (int64_t j = 0; j < cols; ++j) x[4 * cols + j] = -inf;
      auto out = run(Op::Softmax, {make(dt, {6, cols}, x)}, ir::AxisAttrs{1});
      const Vals y = values(out[0]);
      for (int64_t r = 0; r < 6; ++r) {
        double sum = 0;
        for (int64_t j = 0; j < cols; ++j) {
          if (r == 1 || r == 4) {
            EXPECT_TRUE(std::isnan(y[r * cols + j])) << r << "," << j;
          }
          sum += y[r * cols + j];
        }
        if (r != 1 && r != 4) {
          EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << r;
        }
      }
    }
}

void check_cross_entropy(DType dt, DType id, int64_t n, int64_t c, double ls, const Vals& x0) {
  SCOPED_TRACE(type_str({dt, {n, c}}) + " labels " + std::string(dtype_name(id)) +
               " ls=" + std::to_string(ls));
  const Vals x = rounded(dt, x0), labels = rand_ids(n, c, 14);
  auto out = run(Op::CrossEntropy, {make(dt, {n, c}, x), make(id, {n}, labels)},
                 ir::CrossEntropyAttrs{ls});
  ASSERT_EQ(out[0].type, (TensorType{dt, {}}));
  const double want = cross_entropy_ref(x, labels, c, ls);
  EXPECT_NEAR(values(out[0])[0], want, tol(dt) * (1 + std::abs(want)));
}

TEST(CrossEntropyKernel, MatchesReferenceWithAndWithoutLabelSmoothing) {
  for (DType dt : kFloats)
    for (DType id : kIds)
      for (double ls : {0.0, 0.1, 1.0}) {
        check_cross_entropy(dt, id, 37, 11, ls, randu(37 * 11, -4, 4, 15));
        check_cross_entropy(dt, id, 2000, 50, ls, randu(2000 * 50, -4, 4, 16));
      }
}

TEST(CrossEntropyKernel, LargeLogitsStayFinite) {
  for (DType dt : kFloats)
    for (double ls : {0.0, 0.2}) {
      check_cross_entropy(dt, DType::I64, 16, 10, ls, randu(160, -1000, 1000, 17));
      Vals near = randu(160, -5, 5, 18);
      for (double& v : near) v += 1000;
      check_cross_entropy(dt, DType::I64, 16, 10, ls, near);
    }
}

TEST(CrossEntropyKernel, LabelOutOfRangeThrows) {
  const Vals x = randu(4 * 11, -1, 1, 19);
  for (DType id : kIds) {
    auto in = [&](double bad) {
      return std::vector{make(DType::F32, {4, 11}, x), make(id, {4}, {1, 0, bad, 3})};
    };
    EXPECT_EQ(error_of(Op::CrossEntropy, in(11), ir::CrossEntropyAttrs{}),
              "cross_entropy: label 11 out of range [0, 11) at position 2");
    EXPECT_EQ(error_of(Op::CrossEntropy, in(-1), ir::CrossEntropyAttrs{}),
              "cross_entropy: label -1 out of range [0, 11) at position 2");
  }
}

TEST(EmbeddingKernel, GathersRows) {
  for (DType dt : kFloats)
    for (DType id : kIds) {
      const Vals table = rounded(dt, randu(10 * 6, -1, 1, 20)), ids = rand_ids(12, 10, 21);
      auto out =
          run(Op::Embedding, {make(dt, {10, 6}, table), make(id, {3, 4}, ids)}, ir::NoAttrs{});
      ASSERT_EQ(out[0].type, (TensorType{dt, {3, 4, 6}}));
      Vals want;
      for (double i : ids)
        want.insert(want.end(), table.begin() + i * 6, table.begin() + i * 6 + 6);
      EXPECT_EQ(values(out[0]), want);
    }
}

TEST(EmbeddingKernel, IdOutOfRangeThrows) {
  const Buf table = make(DType::F32, {10, 4}, randu(40, -1, 1, 22));
  for (DType id : kIds) {
    EXPECT_EQ(error_of(Op::Embedding, {table, make(id, {5}, {1, 2, 3, 12, 40})}, ir::NoAttrs{}),
              "embedding: id 12 out of range [0, 10) at position 3");
    EXPECT_EQ(error_of(Op::Embedding, {table, make(id, {2, 2}, {0, 9, -1, 0})}, ir::NoAttrs{}),
              "embedding: id -1 out of range [0, 10) at position 2");
    // Enough ids that the check runs in parallel chunks: the first bad one is still the one named.
    Vals many = rand_ids(100000, 10, 23);
    many[90000] = 11;
    many[70000] = 10;
    EXPECT_EQ(error_of(Op::Embedding, {table, make(id, {100000}, many)}, ir::NoAttrs{}),
              "embedding: id 10 out of range [0, 10) at position 70000");
  }
}

TEST(EmbeddingGradKernel, ScatterAddsRepeatedIds) {
  struct Case {
    Shape ids;
    int64_t v, d;
  };
  for (DType dt : kFloats)
    for (DType id : kIds)
      for (const Case& cs : {Case{{5, 7}, 9, 6}, Case{{2000}, 50, 64}, Case{{4, 3}, 3, 1}}) {
        SCOPED_TRACE(type_str({id, cs.ids}) + " into " + std::to_string(cs.v));
        const int64_t n = numel(cs.ids);
        Shape gs = cs.ids;
        gs.push_back(cs.d);
        const Vals g = rounded(dt, randu(n * cs.d, -1, 1, 24)), ids = rand_ids(n, cs.v, 25);
        auto out = run(Op::EmbeddingGrad, {make(dt, gs, g), make(id, cs.ids, ids)},
                       ir::EmbeddingGradAttrs{cs.v});
        Vals want(cs.v * cs.d, 0.0);
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < cs.d; ++j) want[ids[i] * cs.d + j] += g[i * cs.d + j];
        expect_close(values(out[0]), want, tol(dt), "grad");
      }
  const std::vector<Buf> bad{make(DType::F32, {3, 2}, Vals(6, 1.0)),
                             make(DType::I64, {3}, {0, 4, 1})};
  EXPECT_EQ(error_of(Op::EmbeddingGrad, bad, ir::EmbeddingGradAttrs{4}),
            "embedding_grad: id 4 out of range [0, 4) at position 1");
}

TEST(OneHotKernel, MatchesReferenceInEachDtype) {
  const Vals ids{2, 0, 4, 4, 1, 3};
  for (DType id : kIds)
    for (DType dt : {DType::F32, DType::F64, DType::I32, DType::I64, DType::Bool}) {
      SCOPED_TRACE(std::string(dtype_name(id)) + " -> " + std::string(dtype_name(dt)));
      auto out = run(Op::OneHot, {make(id, {2, 3}, ids)}, ir::OneHotAttrs{5, dt});
      ASSERT_EQ(out[0].type, (TensorType{dt, {2, 3, 5}}));
      Vals want(30, 0.0);
      for (int i = 0; i < 6; ++i) want[i * 5 + static_cast<int>(ids[i])] = 1;
      EXPECT_EQ(values(out[0]), want);
    }
  EXPECT_EQ(error_of(Op::OneHot, {make(DType::I32, {3}, {0, 5, 1})}, ir::OneHotAttrs{5}),
            "one_hot: id 5 out of range [0, 5) at position 1");
}

TEST(NnKernel, ResultsDoNotDependOnThreadCount) {
  const Vals x = randu(4096 * 24, -3, 3, 26), g = randu(24, 0.5, 2, 27),
             ids = rand_ids(4096, 24, 28);
  const std::vector<std::pair<Op, std::vector<Buf>>> runs{
      {Op::BatchNorm,
       {make(DType::F32, {4096, 24}, x), make(DType::F32, {24}, g), make(DType::F32, {24}, g),
        make(DType::F32, {24}, g), make(DType::F32, {24}, g)}},
      {Op::BatchNormGrad,
       {make(DType::F32, {4096, 24}, x), make(DType::F32, {24}, g), make(DType::F32, {24}, g),
        make(DType::F32, {24}, g), make(DType::F32, {4096, 24}, x)}},
      {Op::LayerNorm,
       {make(DType::F32, {4096, 24}, x), make(DType::F32, {24}, g), make(DType::F32, {24}, g)}},
      {Op::LayerNormGrad,
       {make(DType::F32, {4096, 24}, x), make(DType::F32, {24}, g),
        make(DType::F32, {4096}, randu(4096, -1, 1, 29)),
        make(DType::F32, {4096}, randu(4096, 0.5, 2, 30)), make(DType::F32, {4096, 24}, x)}},
      {Op::LogSoftmax, {make(DType::F32, {64, 64, 24}, x)}},  // axis 1: split over outer
      {Op::CrossEntropy, {make(DType::F32, {4096, 24}, x), make(DType::I32, {4096}, ids)}},
      {Op::EmbeddingGrad, {make(DType::F32, {4096, 24}, x), make(DType::I64, {4096}, ids)}}};
  auto attrs_of = [](Op op) -> ir::Attrs {
    if (op == Op::BatchNorm) return ir::BatchNormAttrs{};
    if (op == Op::BatchNormGrad) return ir::BatchNormGradAttrs{1};
    if (op == Op::LayerNormGrad) return ir::NoAttrs{};
    if (op == Op::LayerNorm) return ir::NormAttrs{};
    if (op == Op::LogSoftmax) return ir::AxisAttrs{1};
    if (op == Op::CrossEntropy) return ir::CrossEntropyAttrs{0.1};
    return ir::EmbeddingGradAttrs{24};
  };
  const int saved = rt::num_threads();
  for (const auto& [op, in] : runs) {
    rt::set_num_threads(1);
    auto one = run(op, in, attrs_of(op));
    rt::set_num_threads(4);
    auto four = run(op, in, attrs_of(op));
    for (size_t i = 0; i < one.size(); ++i)
      EXPECT_TRUE(one[i].bytes == four[i].bytes) << ir::mnemonic(op) << " output " << i;
  }
  rt::set_num_threads(saved);
}

}  // namespace
}  // namespace lt
