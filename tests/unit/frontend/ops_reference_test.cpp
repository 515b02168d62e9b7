// The ops PyTorch users reach for against float64 references written out on the host from
// PyTorch's documented definitions, and the errors of bad arguments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using testing::AllClose;
using V = std::vector<double>;

Tensor f64(V v, Shape s) { return from_vector<double>(v, std::move(s)); }
V vals(const Tensor& t) { return t.to_vector<double>(); }

using testing::error_of;

// --- losses -------------------------------------------------------------------------------------

struct CeCase {
  V logits;  // [N,C] row-major
  std::vector<int64_t> labels;
  V weight;  // empty: all 1
  int64_t ignore_index = -100;
  double ls = 0;
};

/// PyTorch's cross entropy per row and the mean's denominator, from its documentation:
/// l_i = -w[y_i] ((1 - ls) logp[i, y_i] + ls / C sum_c ... ) with the smoothing term
/// -sum_c w_c logp[i, c] (weighted per class), rows with y_i = ignore_index 0.
struct CeRef {
  V rows;
  double weight_sum = 0;
};
CeRef cross_entropy_ref(const CeCase& k) {
  const size_t n = k.labels.size(), c = k.logits.size() / n;
  CeRef out;
  for (size_t i = 0; i < n; ++i) {
    const double* x = &k.logits[i * c];
    const double m = *std::max_element(x, x + c);
    double se = 0;
    for (size_t j = 0; j < c; ++j) se += std::exp(x[j] - m);
    auto logp = [&](size_t j) { return x[j] - m - std::log(se); };
    auto w = [&](size_t j) { return k.weight.empty() ? 1.0 : k.weight[j]; };
    if (k.labels[i] == k.ignore_index) {
      out.rows.push_back(0);
      continue;
    }
    const size_t y = static_cast<size_t>(k.labels[i]);
    double smooth = 0;
    for (size_t j = 0; j < c; ++j) smooth -= w(j) * logp(j);
    out.rows.push_back((1 - k.ls) * -w(y) * logp(y) + k.ls / static_cast<double>(c) * smooth);
    out.weight_sum += w(y);
  }
  return out;
}

TEST(OpsReference, CrossEntropyReductionsWeightsAndIgnoredRows) {
  const V logits = {0.3, -1.2, 2.0, 0.1, 0.5,  1.1, 0.0, -0.4, 0.9, 2.2, -1.0, 0.4, 0.8, 1.5, -0.3,
                    0.6, 0.6,  0.2, 1.9, -2.0, 0.7, 1.3, 0.5,  0.0, 0.2, 1.0,  0.1, 0.4, 0.3, 0.2};
  const std::vector<int64_t> labels = {2, 4, -100, 0, 3, 1};
  const Tensor x = f64(logits, {6, 5}), y = from_vector<int64_t>(labels, {6});
  const V weight = {0.5, 2, 1, 0.25, 3};
  for (double ls : {0.0, 0.2}) {
    for (bool weighted : {false, true}) {
      SCOPED_TRACE(fmt::format("label_smoothing {} weighted {}", ls, weighted));
      const CeCase k{logits, labels, weighted ? weight : V{}, -100, ls};
      const CeRef ref = cross_entropy_ref(k);
      CrossEntropyOptions o{.weight = weighted ? f64(weight, {5}) : Tensor(),
                            .label_smoothing = ls};
      double total = 0;
      for (double v : ref.rows) total += v;
      EXPECT_NEAR(cross_entropy(x, y, o).item<double>(), total / ref.weight_sum, 1e-14);
      o.reduction = "sum";
      EXPECT_NEAR(cross_entropy(x, y, o).item<double>(), total, 1e-13);
      o.reduction = "none";
      EXPECT_TRUE(AllClose(cross_entropy(x, y, o), f64(ref.rows, {6}), 1e-14, 1e-14));
    }
  }
  // PyTorch 1.13's F.cross_entropy(x, y, weight=w, label_smoothing=0.2) of these values.
  EXPECT_NEAR(cross_entropy(x, y, {.weight = f64(weight, {5}), .label_smoothing = 0.2})
                  .item<double>(),
              1.3258222874698464, 1e-14);
  // ignore_index inside [0, C): rows of that class count for nothing.
  const CeRef ref = cross_entropy_ref({logits, {2, 4, 1, 0, 3, 1}, {}, 1, 0});
  const double mean = (ref.rows[0] + ref.rows[1] + ref.rows[3] + ref.rows[4]) / 4;
  EXPECT_NEAR(cross_entropy(x, from_vector<int64_t>({2, 4, 1, 0, 3, 1}, {6}), {.ignore_index = 1})
                  .item<double>(),
              mean, 1e-14);
}

TEST(OpsReference, CrossEntropyOfOnlyIgnoredRowsIsNan) {
  const Tensor x = f64({1, 2, 3, 4}, {2, 2}), y = from_vector<int64_t>({-100, -100}, {2});
  EXPECT_TRUE(std::isnan(cross_entropy(x, y).item<double>()));  // 0 / 0, as PyTorch
}

TEST(OpsReference, NllLossIsCrossEntropyOfLogSoftmax) {
  const Tensor x = f64({0.3, -1.2, 2.0, 1.1, 0.0, -0.4, 0.9, 2.2, -1.0}, {3, 3});
  const Tensor y = from_vector<int64_t>({2, -100, 1}, {3});
  const Tensor lp = log_softmax(x, 1);
  const V p = vals(lp);
  EXPECT_NEAR(nll_loss(lp, y).item<double>(), -(p[2] + p[7]) / 2, 1e-15);
  const Tensor w = f64({1, 3, 0.5}, {3});
  EXPECT_NEAR(nll_loss(lp, y, {.weight = w}).item<double>(), -(0.5 * p[2] + 3 * p[7]) / 3.5,
              1e-15);
  EXPECT_TRUE(AllClose(nll_loss(lp, y, {.weight = w, .reduction = "none"}),
                       f64({-0.5 * p[2], 0, -3 * p[7]}, {3}), 1e-15, 0));
  EXPECT_NEAR(nll_loss(lp, y, {.reduction = "sum"}).item<double>(), -(p[2] + p[7]), 1e-15);
}

// --- pooling ------------------------------------------------------------------------------------

/// PyTorch's avg_pool2d on one [h,w] plane: output size with ceil_mode's rule, each window's sum
/// over in-bounds taps divided by the window clipped to the padded input (count_include_pad) or
/// by its in-bounds taps.
V avg_pool_ref(const V& x, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p, bool ceil,
               bool include_pad, int64_t* oh_out, int64_t* ow_out) {
  auto out_size = [&](int64_t n) {
    int64_t o = (n + 2 * p - k + (ceil ? s - 1 : 0)) / s + 1;
    if (ceil && (o - 1) * s >= n + p) --o;
    return o;
  };
  const int64_t oh = out_size(h), ow = out_size(w);
  V y;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      const int64_t h0 = i * s - p, w0 = j * s - p;
      const int64_t h1 = std::min(h0 + k, h + p), w1 = std::min(w0 + k, w + p);
      double sum = 0;
      int64_t inside = 0;
      for (int64_t a = std::max<int64_t>(h0, 0); a < std::min(h1, h); ++a)
        for (int64_t b = std::max<int64_t>(w0, 0); b < std::min(w1, w); ++b, ++inside)
          sum += x[a * w + b];
      y.push_back(sum / static_cast<double>(include_pad ? (h1 - h0) * (w1 - w0) : inside));
    }
  *oh_out = oh;
  *ow_out = ow;
  return y;
}

TEST(OpsReference, AvgPoolCeilModeAndCountIncludePad) {
  V xs(5 * 6);
  std::iota(xs.begin(), xs.end(), 1.0);
  const Tensor x = f64(xs, {1, 1, 5, 6});
  for (bool ceil : {false, true})
    for (bool include : {true, false})
      for (int64_t p : {0, 1}) {
        SCOPED_TRACE(fmt::format("ceil_mode {} count_include_pad {} padding {}", ceil, include, p));
        int64_t oh = 0, ow = 0;
        const V want = avg_pool_ref(xs, 5, 6, 3, 2, p, ceil, include, &oh, &ow);
        const Tensor y =
            avg_pool2d(x, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {p, p},
                           .ceil_mode = ceil, .count_include_pad = include});
        EXPECT_EQ(y.shape(), (Shape{1, 1, oh, ow}));
        EXPECT_TRUE(AllClose(y, f64(want, {1, 1, oh, ow}), 1e-15, 1e-15));
      }
  // PyTorch 1.13: avg_pool2d(arange(1, 31).view(1,1,5,6), 3, 2, 1, ceil_mode=True,
  // count_include_pad=False), row 0.
  const Tensor y = avg_pool2d(x, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1},
                                  .ceil_mode = true, .count_include_pad = false});
  EXPECT_TRUE(AllClose(slice(y, 2, 0, 1), f64({4.5, 6, 8, 9}, {1, 1, 1, 4}), 1e-15, 0));
}

TEST(OpsReference, MaxPoolCeilModeKeepsTheOverhangingWindows) {
  V xs(5 * 5);
  std::iota(xs.begin(), xs.end(), 0.0);
  const Tensor y = max_pool2d(f64(xs, {1, 1, 5, 5}), {.kernel = {2, 2}, .ceil_mode = true});
  EXPECT_TRUE(AllClose(y, f64({6, 8, 9, 16, 18, 19, 21, 23, 24}, {1, 1, 3, 3}), 0, 0));
}

// --- along one axis -----------------------------------------------------------------------------

TEST(OpsReference, TopkArgminCumsumVarStd) {
  const Tensor x = f64({3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8}, {2, 6});
  const auto [v, i] = topk(x, 3, 1);
  EXPECT_EQ(vals(v), (V{9, 5, 4, 8, 6, 5}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{5, 4, 2, 5, 1, 2}));  // 5s: index 2
  const auto [lo, li] = topk(x, 2, 1, /*largest=*/false);
  EXPECT_EQ(vals(lo), (V{1, 1, 2, 3}));
  EXPECT_EQ(li.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0, 3}));  // ties: lower index
  const Tensor nan_row = f64({1, std::nan(""), 3}, {3});
  EXPECT_EQ(topk(nan_row, 1).indices.to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(argmin(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(argmin(x, 0, true).shape(), (Shape{1, 6}));
  EXPECT_EQ(vals(cumsum(x, 1)), (V{3, 4, 8, 9, 14, 23, 2, 8, 13, 16, 21, 29}));
  EXPECT_EQ(vals(cumsum(x, 0)), (V{3, 1, 4, 1, 5, 9, 5, 7, 9, 4, 10, 17}));
  const Tensor b = from_vector<bool>({true, false, true}, {3});
  EXPECT_EQ(cumsum(b, 0).dtype(), DType::I64);
  EXPECT_EQ(cumsum(b, 0).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 2}));
  V want_var;  // over dim 1
  const V xv = vals(x);
  for (int r = 0; r < 2; ++r) {
    const V row(xv.begin() + r * 6, xv.begin() + r * 6 + 6);
    const double m = std::accumulate(row.begin(), row.end(), 0.0) / 6;
    double ss = 0;
    for (double e : row) ss += (e - m) * (e - m);
    want_var.push_back(ss / 5);
  }
  EXPECT_TRUE(AllClose(var(x, {1}), f64(want_var, {2}), 1e-14, 1e-14));
  EXPECT_TRUE(AllClose(var(x, {-1}, false, true),
                       f64({want_var[0] * 5 / 6, want_var[1] * 5 / 6}, {2, 1}), 1e-14, 1e-14));
  EXPECT_TRUE(AllClose(lt::std(x, {1}), f64({std::sqrt(want_var[0]), std::sqrt(want_var[1])}, {2}),
                       1e-14, 1e-14));
  EXPECT_TRUE(std::isnan(var(f64({2}, {1})).item<double>()));  // n - 1 = 0
}

TEST(OpsReference, ClampAndMaskedFill) {
  const Tensor x = f64({-2, -0.5, 0, 0.5, 2}, {5});
  EXPECT_EQ(vals(clamp(x, -1.0, 1.0)), (V{-1, -0.5, 0, 0.5, 1}));
  EXPECT_EQ(vals(clamp(x, std::nullopt, 0.25)), (V{-2, -0.5, 0, 0.25, 0.25}));
  const Tensor n = clamp(f64({std::nan("")}, {1}), 0.0, 1.0);
  EXPECT_TRUE(std::isnan(vals(n)[0]));
  const Tensor m = from_vector<bool>({true, false, false, true, false}, {5});
  EXPECT_EQ(vals(masked_fill(x, m, 7)), (V{7, -0.5, 0, 7, 2}));
}

// --- log1p, expm1 -------------------------------------------------------------------------------

/// torch.log1p / torch.expm1 of x and the gradient of their sum (python3-torch 1.13.1), in f64 and
/// in f32 (as f32 values).
struct TorchValues {
  Tensor (*fn)(const Tensor&, Loc);
  V x, y64, g64, y32, g32;
};

/// Eager values and gradient, and the compiled (lazy) values, at dt: within 2 ulps of PyTorch's.
void expect_pytorchs(const TorchValues& t, DType dt) {
  SCOPED_TRACE(dtype_name(dt));
  const double rtol = dt == DType::F64 ? 4.5e-16 : 2.4e-7;
  const V& y = dt == DType::F64 ? t.y64 : t.y32;
  const V& g = dt == DType::F64 ? t.g64 : t.g32;
  const Shape s{static_cast<int64_t>(t.x.size())};
  Tensor x = cast(f64(t.x, s), dt).requires_grad_();
  const Tensor eager = t.fn(x, Loc::current());
  sum(eager).backward();
  EXPECT_TRUE(AllClose(cast(eager, DType::F64), f64(y, s), 0, rtol)) << "eager";
  EXPECT_TRUE(AllClose(cast(x.grad(), DType::F64), f64(g, s), 0, rtol)) << "gradient";
  Tensor lazy;
  {
    ModeGuard guard(Mode::Lazy);
    lazy = t.fn(cast(f64(t.x, s), dt), Loc::current());
    mark_step();
  }
  EXPECT_TRUE(AllClose(cast(lazy, DType::F64), f64(y, s), 0, rtol)) << "compiled";
}

// Where 1 + x rounds to 1 (x = +-1e-10: log(1 + x) and exp(x) - 1 would give 0), near 0, and
// large: PyTorch's values.
TEST(OpsReference, Log1pAndExpm1GivePyTorchsValues) {
  const TorchValues log1p_values{
      log1p,
      {1e-10, -1e-10, 1e-5, 0.5, -0.5, 3.0, 20.0, 100.0, -0.9},
      {9.999999999500001e-11, -1.00000000005e-10, 9.999950000333332e-06, 0.4054651081081644,
       -0.6931471805599453, 1.3862943611198906, 3.044522437723423, 4.61512051684126,
       -2.302585092994046},
      {0.9999999999, 1.0000000001, 0.9999900000999989, 0.6666666666666666, 2.0, 0.25,
       0.047619047619047616, 0.009900990099009901, 10.000000000000002},
      {1.000000013351432e-10, -1.000000013351432e-10, 9.999949725170154e-06, 0.40546509623527527,
       -0.6931471824645996, 1.3862943649291992, 3.044522523880005, 4.6151204109191895,
       -2.3025848865509033},
      {1.0, 1.0, 0.9999899864196777, 0.6666666865348816, 2.0, 0.25, 0.0476190485060215,
       0.009900989942252636, 9.999998092651367}};
  const TorchValues expm1_values{
      expm1,
      {1e-10, -1e-10, 1e-5, 0.5, -0.5, 3.0, 20.0, 80.0, -30.0},
      {1.00000000005e-10, -9.999999999500001e-11, 1.0000050000166668e-05, 0.6487212707001282,
       -0.3934693402873666, 19.085536923187668, 485165194.4097903, 5.54062238439351e+34,
       -0.9999999999999064},
      {1.0000000001, 0.9999999999, 1.00001000005, 1.6487212707001282, 0.6065306597126334,
       20.085536923187668, 485165195.4097903, 5.54062238439351e+34, 9.35918009759007e-14},
      {1.000000013351432e-10, -1.000000013351432e-10, 1.0000049769587349e-05, 0.6487212777137756,
       -0.39346933364868164, 19.08553695678711, 485165184.0, 5.540622484676759e+34, -1.0},
      {1.0, 1.0, 1.0000100135803223, 1.6487212181091309, 0.6065306663513184, 20.08553695678711,
       485165184.0, 5.540622484676759e+34, 0.0}};
  for (const TorchValues* t : {&log1p_values, &expm1_values})
    for (DType dt : {DType::F64, DType::F32}) expect_pytorchs(*t, dt);
}

/// `f` run eagerly, then lazily (compiled), each result's values (signed zeros kept).
std::vector<V> both_modes(const std::function<Tensor()>& f) {
  std::vector<V> out{f().to_vector<double>()};
  Tensor lazy;
  {
    ModeGuard guard(Mode::Lazy);
    lazy = f();
    mark_step();
  }
  out.push_back(lazy.to_vector<double>());
  return out;
}

/// Equal values, and zeros of the same sign.
void expect_same(const V& got, const V& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << what << " " << i;
    EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << what << " " << i;
  }
}

// PyTorch 1.13's values: halves round to even, floor_divide and remainder are Python's // and %
// (b's sign), exact where a / b rounds onto an integer (7 // 0.7 is 10), in f64, f32 and ints.
TEST(OpsReference, RoundingFloorDivideAndRemainderArePyTorchs) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = f64({2.5, -2.5, 0.5, 1.5, -0.0, -1.7, 3.2, inf}, {8});
  for (const V& v : both_modes([&] { return floor(x); }))
    expect_same(v, {2, -3, 0, 1, -0.0, -2, 3, inf}, "floor");
  for (const V& v : both_modes([&] { return ceil(x); }))
    expect_same(v, {3, -2, 1, 2, -0.0, -1, 4, inf}, "ceil");
  for (const V& v : both_modes([&] { return round(x); }))
    expect_same(v, {2, -2, 0, 2, -0.0, -2, 3, inf}, "round");
  const Tensor third = cast(f64({1.25, -2.35, 0.05}, {3}), DType::F32);
  for (const V& v : both_modes([&] { return round(third, 1); }))
    expect_same(v, {1.2000000476837158, -2.4000000953674316, 0.0}, "round(decimals=1)");
  const Tensor a = f64({5.5, -5.5, 5.5, -5.5, 7.0, -0.0, 1e-20, 6.0}, {8});
  const Tensor b = f64({2.0, 2.0, -2.0, -2.0, 0.7, 2.0, 3.0, 0.1}, {8});
  for (const V& v : both_modes([&] { return remainder(a, b); }))
    expect_same(v, {1.5, 0.5, -0.5, -1.5, 4.440892098500626e-16, -0.0, 1e-20,
                    0.09999999999999967}, "remainder f64");
  for (const V& v : both_modes([&] { return floor_divide(a, b); }))
    expect_same(v, {2, -3, -3, 2, 10, -0.0, 0, 59}, "floor_divide f64");
  const Tensor af = cast(a, DType::F32), bf = cast(b, DType::F32);
  for (const V& v : both_modes([&] { return remainder(af, bf); }))
    expect_same(v, {1.5, 0.5, -0.5, -1.5, 1.1920928955078125e-07, -0.0, 9.999999682655225e-21,
                    0.09999991208314896}, "remainder f32");
  for (const V& v : both_modes([&] { return floor_divide(af, bf); }))
    expect_same(v, {2, -3, -3, 2, 10, -0.0, 0, 59}, "floor_divide f32");
  const Tensor i = from_vector<int64_t>({7, -7, 7, -7, 0, -9223372036854775807}, {6});
  const Tensor j = from_vector<int64_t>({3, 3, -3, -3, 5, -1}, {6});
  EXPECT_EQ(remainder(i, j).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, -2, -1, 0, 0}));
  EXPECT_EQ(floor_divide(i, j).to_vector<int64_t>(),
            (std::vector<int64_t>{2, -3, -3, 2, 0, 9223372036854775807}));
  EXPECT_EQ(remainder(i, 4).dtype(), DType::I64);
  EXPECT_EQ(remainder(i, 2.5).dtype(), DType::F32);  // a float number promotes, as PyTorch's
  // Integer floor, ceil and round are the integers; bool is refused.
  const Tensor f = floor(i);
  EXPECT_EQ(f.dtype(), DType::I64);
  EXPECT_EQ(f.to_vector<int64_t>(), i.to_vector<int64_t>());
  const Tensor mask = ne(i, j);
  EXPECT_EQ(error_of([&] { floor(mask); }).substr(0, 30), "floor: does not take bool oper");
  const std::string zero = error_of([&] { remainder(i, scalar(0, DType::I64)); });
  EXPECT_EQ(zero.substr(0, zero.find(" at ")), "remainder: integer division by zero");
  // d/da = 1, d/db = -floor_divide(a, b): PyTorch's gradients at a = [5.5, -3], b = [2, 0.7].
  Tensor ga = f64({5.5, -3.0}, {2}).requires_grad_(), gb = f64({2.0, 0.7}, {2}).requires_grad_();
  sum(remainder(ga, gb)).backward();
  EXPECT_EQ(ga.grad().to_vector<double>(), (V{1, 1}));
  EXPECT_EQ(gb.grad().to_vector<double>(), (V{-2, 5}));
}

// --- bad arguments ------------------------------------------------------------------------------

TEST(OpsReference, BadArgumentsNameTheArgument) {
  const Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = from_vector<int64_t>({0, 2}, {2});
  using ::testing::StartsWith;
  EXPECT_THAT(error_of([&] { topk(x, 4, 1); }),
              StartsWith("topk: k = 4 outside [0, 3] (the size of axis 1) (operands: f64[2,3])"));
  EXPECT_THAT(error_of([&] { cross_entropy(x, y, {.reduction = "avg"}); }),
              StartsWith("cross_entropy: reduction must be \"none\", \"sum\" or \"mean\", got "
                         "\"avg\" (operands: f64[2,3], i64[2]) at "));
  EXPECT_THAT(error_of([&] { cross_entropy(x, y, {.weight = f64({1, 2}, {2})}); }),
              StartsWith("cross_entropy: weight must be f64[3] (one per class, the dtype of the "
                         "input), got f64[2] (operands: f64[2,3], i64[2], f64[2]) at "));
  EXPECT_THAT(error_of([&] { nll_loss(x, y, {.reduction = "mean "}); }),
              StartsWith("nll_loss: reduction must be"));
  EXPECT_THAT(error_of([&] { max(x, 2); }),
              StartsWith("max: dim 2 out of range for rank 2 (operands: f64[2,3]) at "));
  EXPECT_THAT(error_of([&] { var(x, {-3}); }), StartsWith("var: dim -3 out of range for rank 2"));
  EXPECT_THAT(error_of([&] { cumsum(x, 5); }), StartsWith("cumsum: dim 5 out of range"));
  EXPECT_THAT(error_of([&] { clamp(x, std::nullopt); }),
              StartsWith("clamp: at least one of min and max must be given"));
  EXPECT_THAT(error_of([&] { masked_fill(x, x, 0); }),
              StartsWith("masked_fill: mask must be bool, got f64[2,3]"));
  EXPECT_THAT(error_of([&] { cross_entropy(x, from_vector<int64_t>({0, 3}, {2})); }),
              StartsWith("cross_entropy: label 3 out of range [0, 3) at position 1"));
  EXPECT_THAT(error_of([&] { avg_pool2d(reshape(x, {1, 1, 2, 3}), {.kernel = {3, 3}}); }),
              StartsWith("avg_pool2d: window does not fit input [1,1,2,3]"));
}

}  // namespace
}  // namespace lt
