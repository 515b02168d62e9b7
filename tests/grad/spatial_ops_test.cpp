// The spatial ops composed of rows (conv1d, conv_transpose2d, interpolate, adaptive pools), over a
// table of calls as tests/grad/index_ops_test.cpp: autograd against central differences in f64,
// with a random cotangent for every float output, and lazy at every opt level against eager.
// Their values are PyTorch's (tests/unit/frontend/spatial_reference_test.cpp).
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

using Outs = std::vector<Tensor>;

struct Call {
  std::string name;
  std::vector<Tensor> inputs;  // f64 floats (gradcheck perturbs them)
  std::function<Outs(const std::vector<Tensor>&)> f;
};

Outs one(Tensor t) { return {std::move(t)}; }
Outs both(ValuesIndices v) { return {std::move(v.values), std::move(v.indices)}; }

std::vector<Call> calls() {
  Rng r(20261202);
  return {
      {"conv1d stride 2, padding 1, dilation 2, groups 2, bias",
       {s::uniform(r, {2, 4, 9}), s::uniform(r, {6, 2, 3}), s::uniform(r, {6})},
       [](auto& x) { return one(conv1d(x[0], x[1], x[2], {2, 1, 2, 2})); }},
      {"conv1d unbatched, no bias", {s::uniform(r, {3, 6}), s::uniform(r, {2, 3, 2})},
       [](auto& x) { return one(conv1d(x[0], x[1])); }},
      {"conv_transpose2d stride {2,3}, output_padding {1,2}, groups 2, bias",
       {s::uniform(r, {1, 4, 3, 3}), s::uniform(r, {4, 3, 3, 2}), s::uniform(r, {6})},
       [](auto& x) {
         return one(conv_transpose2d(x[0], x[1], x[2], {{2, 3}, {1, 0}, {1, 2}, 2, {1, 1}}));
       }},
      {"conv_transpose2d output_padding 1 at stride 1, dilation 2 (cropped and padded)",
       {s::uniform(r, {2, 2, 3, 4}), s::uniform(r, {2, 3, 2, 3})},
       [](auto& x) {
         return one(conv_transpose2d(x[0], x[1], {}, {{1, 1}, {0, 2}, {1, 1}, 1, {2, 2}}));
       }},
      {"interpolate nearest to size {5,7}", {s::uniform(r, {1, 2, 3, 4})},
       [](auto& x) { return one(interpolate(x[0], {.size = {5, 7}})); }},
      {"interpolate nearest by 0.5 and 1.5", {s::uniform(r, {2, 1, 4, 3})},
       [](auto& x) { return one(interpolate(x[0], {.scale_factor = {0.5, 1.5}})); }},
      {"interpolate bilinear to size {7,2}", {s::uniform(r, {1, 2, 3, 5})},
       [](auto& x) { return one(interpolate(x[0], {.size = {7, 2}, .mode = "bilinear"})); }},
      {"interpolate bilinear align_corners by 2", {s::uniform(r, {1, 1, 3, 4})},
       [](auto& x) {
         return one(interpolate(x[0], {.scale_factor = {2.0}, .mode = "bilinear",
                                       .align_corners = true}));
       }},
      {"adaptive_avg_pool2d {5,7} -> {3,4}", {s::uniform(r, {2, 2, 5, 7})},
       [](auto& x) { return one(adaptive_avg_pool2d(x[0], {3, 4})); }},
      {"adaptive_avg_pool2d {3,5} -> {5,2} (overlapping windows)", {s::uniform(r, {1, 1, 3, 5})},
       [](auto& x) { return one(adaptive_avg_pool2d(x[0], {5, 2})); }},
      {"adaptive_avg_pool2d {4,6} -> {2,3} (avg_pool2d)", {s::uniform(r, {1, 2, 4, 6})},
       [](auto& x) { return one(adaptive_avg_pool2d(x[0], {2, 3})); }},
      {"adaptive_avg_pool2d [C,H,W] -> 1x1", {s::uniform(r, {3, 4, 5})},
       [](auto& x) { return one(adaptive_avg_pool2d(x[0], {1})); }},
      {"adaptive_max_pool2d_with_indices {5,7} -> {3,4}", {s::distinct1(r, {2, 2, 5, 7})},
       [](auto& x) { return both(adaptive_max_pool2d_with_indices(x[0], {3, 4})); }},
      {"adaptive_max_pool2d {6,4} -> {3,2} (max_pool2d)", {s::distinct1(r, {1, 2, 6, 4})},
       [](auto& x) { return one(adaptive_max_pool2d(x[0], {3, 2})); }},
      {"adaptive_max_pool2d [C,H,W] {3,5} -> {4,2}", {s::distinct1(r, {2, 3, 5})},
       [](auto& x) { return one(adaptive_max_pool2d(x[0], {4, 2})); }},
  };
}

Tensor cotangent(const Tensor& t, Rng& r) {
  std::vector<double> v(t.numel());
  for (double& x : v) x = r.uniform(-1, 1);
  return from_vector<double>(v, t.shape());
}

/// sum_k <outs[k], cots[k]> over the float outputs.
double loss(const Outs& outs, const Outs& cots) {
  double l = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!cots[k].defined()) continue;
    const auto y = outs[k].to_vector<double>(), w = cots[k].to_vector<double>();
    for (size_t i = 0; i < y.size(); ++i) l += y[i] * w[i];
  }
  return l;
}

TEST(SpatialOps, GradientsMatchCentralDifferences) {
  for (const Call& c : calls()) {
    SCOPED_TRACE(c.name);
    Rng r(7);
    std::vector<Tensor> leaves;
    for (const Tensor& t : c.inputs)
      leaves.push_back(t.dtype() == DType::F64 ? t.detach().requires_grad_() : t);
    const Outs y = c.f(leaves);
    Outs cots;
    Tensor total;
    for (const Tensor& out : y) {
      cots.push_back(out.dtype() == DType::F64 ? cotangent(out, r) : Tensor());
      if (!cots.back().defined()) continue;
      const Tensor term = sum(out * cots.back());
      total = total.defined() ? total + term : term;
    }
    total.backward();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].dtype() != DType::F64) continue;
      SCOPED_TRACE("input " + std::to_string(i));
      const std::vector<double> want = testing::central_differences(
          [&](const std::vector<double>& xs) {
            NoGradGuard no_grad;
            std::vector<Tensor> in = c.inputs;
            in[i] = from_vector<double>(xs, c.inputs[i].shape());
            return loss(c.f(in), cots);
          },
          c.inputs[i].to_vector<double>(), {.eps = 1e-6});
      const Tensor got = leaves[i].grad().defined() ? leaves[i].grad() : zeros_like(leaves[i]);
      EXPECT_TRUE(testing::AllClose(got, from_vector<double>(want, c.inputs[i].shape()), 1e-6,
                                    1e-5));
    }
  }
}

TEST(SpatialOps, LazyMatchesEagerAtEveryOptLevel) {
  std::vector<testing::TracedCall> traced;
  for (const Call& c : calls()) traced.push_back({c.name, c.inputs, c.f});
  testing::expect_lazy_matches_eager(traced, 1e-12, 2e-6);
}

}  // namespace
}  // namespace lt
