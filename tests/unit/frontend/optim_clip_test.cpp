// clip_grad_norm_ against hand computations: the global norm of the per-gradient norms, the
// coefficient max_norm / (norm + 1e-6) clamped to 1, in eager and lazy mode (no sync); and
// clip_grad_value_ against a clamp on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "lt/optim.h"
#include "tests/support/error_of.h"

namespace lt::optim {
namespace {

using testing::error_of;
using Vec = std::vector<double>;

struct Params {
  // Gradients [3, 4] and [12]: norms 5 and 12, global 2-norm 13; c has no gradient.
  Tensor a = from_vector<double>({1, 1}, {2}).requires_grad_();
  Tensor b = from_vector<double>({1}, {1}).requires_grad_();
  Tensor c = from_vector<double>({1}, {1}).requires_grad_();
  Params() {
    a.set_grad(from_vector<double>({3, 4}, {2}));
    b.set_grad(from_vector<double>({12}, {1}));
  }
  std::vector<Tensor> all() const { return {a, b, c}; }
};

TEST(ClipGradNorm, ScalesEveryGradientByMaxNormOverTheGlobalNorm) {
  Params p;
  const Tensor norm = clip_grad_norm_(p.all(), 6.5);
  EXPECT_EQ(norm.rank(), 0);
  EXPECT_EQ(norm.item<double>(), 13.0);
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_EQ(p.a.grad().to_vector<double>(), (Vec{3 * coef, 4 * coef}));
  EXPECT_EQ(p.b.grad().to_vector<double>(), (Vec{12 * coef}));
  EXPECT_FALSE(p.c.grad().defined());
}

TEST(ClipGradNorm, BelowTheLimitGradientsStayExactlyTheSame) {
  Params p;
  EXPECT_EQ(clip_grad_norm_(p.all(), 13.5).item<double>(), 13.0);
  EXPECT_EQ(p.a.grad().to_vector<double>(), (Vec{3, 4}));
  EXPECT_EQ(p.b.grad().to_vector<double>(), (Vec{12}));
}

TEST(ClipGradNorm, OtherNorms) {
  struct Case {
    double type, total;
  };
  const Case cases[] = {{1, 3 + 4 + 12},
                        {INFINITY, 12},
                        {3, std::cbrt(std::pow(std::cbrt(27.0 + 64.0), 3) + 1728.0)}};
  for (const Case& c : cases) {
    Params p;
    const double total = clip_grad_norm_(p.all(), 1.0, c.type).item<double>();
    EXPECT_NEAR(total, c.total, 1e-12 * c.total) << c.type;
    EXPECT_NEAR(p.b.grad().item<double>(), 12 * 1.0 / (c.total + 1e-6), 1e-12) << c.type;
  }
}

TEST(ClipGradNorm, F32) {
  Tensor w = from_vector<float>({0, 0, 0}, {3}).requires_grad_();
  w.set_grad(from_vector<float>({2, -4, 4}, {3}));  // norm 6
  EXPECT_FLOAT_EQ(clip_grad_norm_({w}, 3).item<float>(), 6.0f);
  const std::vector<float> g = w.grad().to_vector<float>();
  EXPECT_NEAR(g[1], -2.0f, 1e-6);
}

TEST(ClipGradNorm, NoGradientsGiveZero) {
  Tensor w = zeros({2}).requires_grad_();
  EXPECT_EQ(clip_grad_norm_({w}, 1).item<float>(), 0.0f);
}

TEST(ClipGradNorm, LazyModeComputesAndAppliesItInTheGraph) {
  Params p;
  metrics::reset();
  Tensor norm;
  {
    ModeGuard lazy(Mode::Lazy);
    norm = clip_grad_norm_(p.all(), 6.5);
    EXPECT_TRUE(is_pending(norm));
    EXPECT_TRUE(is_pending(p.a.grad()));
    mark_step();
  }
  EXPECT_EQ(metrics::counter("sync"), 0);
  EXPECT_EQ(metrics::counter("graphs_run"), 1);
  EXPECT_EQ(norm.item<double>(), 13.0);
  const double coef = 6.5 / (13.0 + 1e-6);
  const Vec g = p.a.grad().to_vector<double>();
  EXPECT_NEAR(g[0], 3 * coef, 1e-15);
  EXPECT_NEAR(g[1], 4 * coef, 1e-15);
}

TEST(ClipGradValue, ClampsEveryGradientAndKeepsNaN) {
  Tensor w = zeros({5}, DType::F64).requires_grad_(), v = zeros({1}).requires_grad_();
  Tensor none = zeros({1}).requires_grad_();
  w.set_grad(from_vector<double>({-3, -0.5, 0.25, 2, std::nan("")}, {5}));
  v.set_grad(from_vector<float>({-7.5f}, {1}));
  clip_grad_value_({w, v, none}, 1.5);
  const Vec g = w.grad().to_vector<double>();
  EXPECT_EQ(Vec(g.begin(), g.end() - 1), (Vec{-1.5, -0.5, 0.25, 1.5}));
  EXPECT_TRUE(std::isnan(g.back()));
  EXPECT_EQ(v.grad().to_vector<float>(), std::vector<float>{-1.5f});
  EXPECT_FALSE(none.grad().defined());
}

// In the graph: no sync, and another clip value is the same graph.
TEST(ClipGradValue, LazyModeCompilesOnceForAnyValue) {
  Tensor w = zeros({3}, DType::F64).requires_grad_();
  ModeGuard lazy(Mode::Lazy);
  for (double clip : {1.0, 0.25, 2.5}) {
    if (clip == 0.25) metrics::reset();
    w.set_grad(from_vector<double>({-3, 0.5, 2}, {3}));
    clip_grad_value_({w}, clip);
    mark_step();
    const Vec g = w.grad().to_vector<double>();
    EXPECT_EQ(g, (Vec{-clip, std::min(0.5, clip), std::min(2.0, clip)})) << clip;
  }
  EXPECT_EQ(metrics::counter("cache_miss"), 0);
  EXPECT_EQ(metrics::counter("sync"), 0);
}

TEST(ClipGradValue, BadArgumentsAreErrors) {
  const std::string line = std::to_string(__LINE__ + 1);
  EXPECT_EQ(error_of([] { clip_grad_value_({}, -1); }),
            "clip_grad_value_: clip_value must be finite and >= 0, got -1 at "
            "optim_clip_test.cpp:" +
                line);
  EXPECT_NE(error_of([] { clip_grad_value_({Tensor()}, 1); }), "no error");
}

TEST(ClipGradNorm, BadArgumentsAreErrors) {
  Params p;
  const auto message = [](auto call) -> std::string {
    try {
      call();
    } catch (const Error& e) {
      const std::string s = e.what();
      return s.substr(0, s.rfind(" at "));
    }
    return "no error";
  };
  EXPECT_EQ(message([&] { clip_grad_norm_(p.all(), 1, 0); }),
            "clip_grad_norm_: norm_type must be positive or infinity, got 0");
  EXPECT_EQ(message([&] { clip_grad_norm_(p.all(), -1); }),
            "clip_grad_norm_: max_norm must be >= 0, got -1");
  Tensor f = zeros({1}).requires_grad_();
  f.set_grad(ones({1}));
  EXPECT_EQ(message([&] {
              clip_grad_norm_({p.a, f}, 1);
            }),
            "clip_grad_norm_: gradients of different dtypes (f64 and f32)");
}

}  // namespace
}  // namespace lt::optim
