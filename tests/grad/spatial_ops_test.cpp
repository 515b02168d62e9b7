// The spatial ops composed of rows (conv1d, conv_transpose2d, interpolate, adaptive pools, max
// pooling with indices or dilation), over a table of calls as tests/grad/index_ops_test.cpp:
// autograd against central differences in f64, with a random cotangent for every float output,
// and lazy at every opt level against eager.
// Their values are PyTorch's (tests/unit/frontend/spatial_reference_test.cpp).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "lt/lt.h"
#include "tests/support/gradcheck_calls.h"
#include "tests/support/lazy_vs_eager.h"
#include "tests/support/op_samples_builders.h"

namespace lt {
namespace {

using testing::samples::Rng;
namespace s = testing::samples;

using Outs = std::vector<Tensor>;

using Call = testing::TracedCall;

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
      {"max_pool2d_with_indices 3x3 s2 p1 d2 ceil", {s::distinct1(r, {2, 2, 9, 8})},
       [](auto& x) {
         return both(max_pool2d_with_indices(
             x[0], {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true,
                    .dilation = {2, 2}}));
       }},
      {"max_pool2d dilated [C,H,W]", {s::distinct1(r, {2, 6, 7})},
       [](auto& x) {
         return one(max_pool2d(x[0], {.kernel = {2, 3}, .stride = {1, 2}, .dilation = {2, 1}}));
       }},
  };
}

TEST(SpatialOps, GradientsMatchCentralDifferences) {
  testing::expect_gradients_match_central_differences(calls());
}

TEST(SpatialOps, LazyMatchesEagerAtEveryOptLevel) {
  testing::expect_lazy_matches_eager(calls(), 1e-12, 2e-6);
}

}  // namespace
}  // namespace lt
