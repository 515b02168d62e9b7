// The user functions composed of rows (clamp, masked_fill, max/min along a dim, var/std,
// cross_entropy's options, nll_loss, hardtanh, relu6, hardswish, hardsigmoid, elu, softplus,
// mish) and the ones over rows with extra argument handling (gelu's approximate, cumsum, topk, argmin): the
// table-driven gradcheck and eager-vs-lazy tests see rows, not these calls. The same two checks,
// over a table of calls: autograd against central differences in f64 with a random cotangent,
// and lazy at every opt level against eager.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/central_difference.h"
#include "tests/support/lazy_vs_eager.h"
#include "tests/support/op_samples_builders.h"

namespace lt {
namespace {

using testing::samples::Rng;
namespace s = testing::samples;

struct Call {
  std::string name;
  std::vector<Tensor> inputs;  // f64 floats (gradcheck perturbs them), ints and bools as given
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f;
  bool differentiable = true;  // every float input but the class weight
};

/// Input 2 of the losses that take one is the class weight, a constant.
bool is_class_weight(const Call& c, size_t i) {
  return i == 2 && (c.name.starts_with("cross_entropy") || c.name.starts_with("nll_loss"));
}

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

std::vector<Call> calls() {
  Rng r(20240611);
  const Tensor labels = s::i64({1, 0, 4, 1, -100, 3}, {6});
  const Tensor weight = s::f64({0.5, 2, 1, 0.25, 3}, {5});
  return {
      {"gelu exact", {s::uniform(r, {3, 4}, -3, 3)},
       [](auto& x) { return one(gelu(x[0])); }},
      {"clamp both bounds", {s::away_from_zero(r, {3, 4}, 0.1, 2)},
       [](auto& x) { return one(clamp(x[0], -0.55, 0.65)); }},
      {"clamp min only", {s::uniform(r, {7}, -2, 2)},
       [](auto& x) { return one(clamp(x[0], 0.05)); }},
      {"clamp max only", {s::uniform(r, {7}, -2, 2)},
       [](auto& x) { return one(clamp(x[0], std::nullopt, 0.05)); }},
      {"masked_fill, mask broadcast [3] over [2,3]", {s::uniform(r, {2, 3}), s::bools(r, {3})},
       [](auto& x) { return one(masked_fill(x[0], x[1], -7.5)); }},
      {"max along dim 1", {s::distinct1(r, {3, 4})},
       [](auto& x) {
         auto [v, i] = max(x[0], 1);
         return std::vector{v, i};
       }},
      {"min along dim 0 keepdim", {s::distinct1(r, {3, 4})},
       [](auto& x) {
         auto [v, i] = min(x[0], 0, true);
         return std::vector{v, i};
       }},
      {"max along dim -1 of [2,3,4]", {s::distinct1(r, {2, 3, 4})},
       [](auto& x) { return one(max(x[0], -1).values); }},
      {"var dim 1 unbiased", {s::uniform(r, {3, 5})}, [](auto& x) { return one(var(x[0], {1})); }},
      {"var all biased keepdim", {s::uniform(r, {2, 3})},
       [](auto& x) { return one(var(x[0], {}, false, true)); }},
      {"std dims 0,2", {s::uniform(r, {3, 2, 4})},
       [](auto& x) { return one(lt::std(x[0], {0, 2})); }},
      {"cross_entropy weight, mean, an ignored row", {s::uniform(r, {6, 5}), labels, weight},
       [](auto& x) { return one(cross_entropy(x[0], x[1], {.weight = x[2]})); }},
      {"cross_entropy reduction sum, ignore_index 1",
       {s::uniform(r, {6, 5}), s::i64({1, 0, 4, 1, 2, 3}, {6})},
       [](auto& x) {
         return one(cross_entropy(x[0], x[1], {.ignore_index = 1, .reduction = "sum"}));
       }},
      {"cross_entropy none, label smoothing 0.2", {s::uniform(r, {6, 5}), labels},
       [](auto& x) {
         return one(cross_entropy(x[0], x[1], {.reduction = "none", .label_smoothing = 0.2}));
       }},
      {"cross_entropy weight, smoothing 0.1, mean", {s::uniform(r, {6, 5}), labels, weight},
       [](auto& x) {
         return one(cross_entropy(x[0], x[1], {.weight = x[2], .label_smoothing = 0.1}));
       }},
      {"cross_entropy default (fused row) with ignored rows", {s::uniform(r, {6, 5}), labels},
       [](auto& x) { return one(cross_entropy(x[0], x[1], 0.3)); }},
      {"nll_loss of log_softmax, weight, mean", {s::uniform(r, {6, 5}), labels, weight},
       [](auto& x) { return one(nll_loss(log_softmax(x[0], 1), x[1], {.weight = x[2]})); }},
      {"nll_loss none", {s::uniform(r, {6, 5}, -3, 0), labels},
       [](auto& x) { return one(nll_loss(x[0], x[1], {.reduction = "none"})); }},
      {"cumsum dim -1", {s::uniform(r, {3, 4})}, [](auto& x) { return one(cumsum(x[0], -1)); }},
      {"cumsum of i32 (i64 result)", {cast(s::i64({3, -1, 4, 1, -5, 9}, {2, 3}), DType::I32)},
       [](auto& x) { return one(cumsum(x[0], 0)); }, false},
      {"topk 2 smallest along dim 0", {s::distinct1(r, {4, 3})},
       [](auto& x) {
         auto [v, i] = topk(x[0], 2, 0, false);
         return std::vector{v, i};
       },
       false},
      {"hardswish", {s::uniform(r, {3, 4}, -5, 5)}, [](auto& x) { return one(hardswish(x[0])); }},
      {"hardtanh -0.5, 1.5", {s::uniform(r, {3, 4}, -2, 2)},
       [](auto& x) { return one(hardtanh(x[0], -0.5, 1.5)); }},
      {"relu6", {s::uniform(r, {3, 4}, -3, 9)}, [](auto& x) { return one(relu6(x[0])); }},
      {"hardsigmoid", {s::uniform(r, {3, 4}, -4, 4)},
       [](auto& x) { return one(hardsigmoid(x[0])); }},
      {"elu alpha 0.7", {s::uniform(r, {3, 4}, -3, 3)},
       [](auto& x) { return one(elu(x[0], 0.7)); }},
      {"softplus", {s::uniform(r, {3, 4}, -4, 4)}, [](auto& x) { return one(softplus(x[0])); }},
      {"softplus beta 2, threshold 1.5 (both pieces)", {s::uniform(r, {3, 4}, -2, 2)},
       [](auto& x) { return one(softplus(x[0], 2, 1.5)); }},
      {"mish", {s::uniform(r, {3, 4}, -4, 4)}, [](auto& x) { return one(mish(x[0])); }},
      {"argmin dim 1", {s::distinct1(r, {3, 4})}, [](auto& x) { return one(argmin(x[0], 1)); },
       false},
  };
}

Tensor cotangent(const Tensor& t, Rng& r) {
  std::vector<double> v(t.numel());
  for (double& x : v) x = r.uniform(-1, 1);
  return from_vector<double>(v, t.shape());
}

double loss(const Call& c, const std::vector<Tensor>& in, const Tensor& cot) {
  NoGradGuard no_grad;
  const auto y = c.f(in)[0].to_vector<double>(), w = cot.to_vector<double>();
  double l = 0;
  for (size_t i = 0; i < y.size(); ++i) l += y[i] * w[i];
  return l;
}

TEST(CompositeOps, GradientsMatchCentralDifferences) {
  for (const Call& c : calls()) {
    if (!c.differentiable) continue;
    SCOPED_TRACE(c.name);
    Rng r(7);
    std::vector<Tensor> leaves;
    for (const Tensor& t : c.inputs)
      leaves.push_back(t.dtype() == DType::F64 ? t.detach().requires_grad_() : t);
    const Tensor y = c.f(leaves)[0];
    const Tensor cot = cotangent(y, r);
    y.backward(cot);
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].dtype() != DType::F64 || is_class_weight(c, i)) continue;
      SCOPED_TRACE("input " + std::to_string(i));
      const std::vector<double> want = testing::central_differences(
          [&](const std::vector<double>& xs) {
            std::vector<Tensor> in = c.inputs;
            in[i] = from_vector<double>(xs, c.inputs[i].shape());
            return loss(c, in, cot);
          },
          c.inputs[i].to_vector<double>(), {.eps = 1e-6});
      const Tensor got = leaves[i].grad().defined() ? leaves[i].grad() : zeros_like(leaves[i]);
      EXPECT_TRUE(testing::AllClose(got, from_vector<double>(want, c.inputs[i].shape()), 1e-6,
                                    1e-5));
    }
  }
}

TEST(CompositeOps, WeightsGetNoGradient) {
  const Tensor w = from_vector<double>({1, 2, 3}, {3}).requires_grad_();
  const Tensor x = from_vector<double>({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, {2, 3});
  const Tensor y = from_vector<int64_t>({2, 0}, {2});
  cross_entropy(x.detach().requires_grad_(), y, {.weight = w}).backward();
  EXPECT_FALSE(w.grad().defined());
}

TEST(CompositeOps, LazyMatchesEagerAtEveryOptLevel) {
  std::vector<testing::TracedCall> traced;
  for (const Call& c : calls()) traced.push_back({c.name, c.inputs, c.f});
  testing::expect_lazy_matches_eager(traced, 1e-12, 2e-6);
}

}  // namespace
}  // namespace lt
