// The indexing and shaping functions composed of rows (stack, split, chunk, unbind, narrow,
// select, roll, flip, tril, triu, sort, argsort, index_select, index_add, scatter's value form,
// einsum, diagonal, diag, trace, and the selections by mask or index)
// and the row functions' dim handling (gather, scatter, scatter_add): the table-driven tests see
// rows, not these calls. Over a table of calls, as tests/grad/composite_ops_test.cpp: autograd
// against central differences in f64, with a random cotangent for every float output, and lazy
// at every opt level against eager.
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
  Rng r(20261201);
  return {
      {"stack dim 1", {s::uniform(r, {2, 3}), s::uniform(r, {2, 3}), s::uniform(r, {2, 3})},
       [](auto& x) { return one(stack({x[0], x[1], x[2]}, 1)); }},
      {"stack dim -1", {s::uniform(r, {4}), s::uniform(r, {4})},
       [](auto& x) { return one(stack(x, -1)); }},
      {"split 2 along dim 0 of [5,3]", {s::uniform(r, {5, 3})},
       [](auto& x) { return split(x[0], 2, 0); }},
      {"split sizes {1,3,1} along dim -1", {s::uniform(r, {2, 5})},
       [](auto& x) { return split(x[0], {1, 3, 1}, -1); }},
      {"chunk 3 of [2,7] along dim 1", {s::uniform(r, {2, 7})},
       [](auto& x) { return chunk(x[0], 3, 1); }},
      {"unbind dim 1", {s::uniform(r, {3, 4})}, [](auto& x) { return unbind(x[0], 1); }},
      {"narrow dim 1 from -3, length 2", {s::uniform(r, {3, 5})},
       [](auto& x) { return one(narrow(x[0], 1, -3, 2)); }},
      {"select dim 0 index -1", {s::uniform(r, {3, 4})},
       [](auto& x) { return one(select(x[0], 0, -1)); }},
      {"roll {1,-2} along {0,1}", {s::uniform(r, {3, 4})},
       [](auto& x) { return one(roll(x[0], {1, -2}, {0, 1})); }},
      {"roll 5 flattened", {s::uniform(r, {3, 4})}, [](auto& x) { return one(roll(x[0], 5)); }},
      {"flip dims {0,2}", {s::uniform(r, {2, 3, 4})},
       [](auto& x) { return one(flip(x[0], {0, 2})); }},
      {"tril of [2,3,4]", {s::uniform(r, {2, 3, 4})}, [](auto& x) { return one(tril(x[0])); }},
      {"triu diagonal -1 of [4,3]", {s::uniform(r, {4, 3})},
       [](auto& x) { return one(triu(x[0], -1)); }},
      {"sort along dim 1", {s::distinct1(r, {3, 5})}, [](auto& x) { return both(sort(x[0], 1)); }},
      {"sort descending along dim 0", {s::distinct1(r, {4, 3})},
       [](auto& x) { return both(sort(x[0], 0, true)); }},
      {"argsort along dim -1", {s::distinct1(r, {2, 6})},
       [](auto& x) { return one(argsort(x[0])); }},
      {"gather dim -1", {s::uniform(r, {3, 4}), s::i64({3, 0, 0, 2, 1, 1}, {3, 2})},
       [](auto& x) { return one(gather(x[0], -1, x[1])); }},
      {"scatter value, dim -2", {s::uniform(r, {3, 4}), s::i64({2, 0, 1, 2}, {1, 4})},
       [](auto& x) { return one(scatter(x[0], -2, x[1], 0.5)); }},
      {"scatter_add dim 0 with repeats",
       {s::uniform(r, {3, 2}), s::i64({2, 2, 0, 2, 2, 1}, {3, 2}), s::uniform(r, {3, 2})},
       [](auto& x) { return one(scatter_add(x[0], 0, x[1], x[2])); }},
      {"index_select dim 1, i32 index with repeats",
       {s::uniform(r, {3, 4}), cast(s::i64({3, 0, 3}, {3}), DType::I32)},
       [](auto& x) { return one(index_select(x[0], 1, x[1])); }},
      {"index_select dim 0 of [5,2,3]", {s::uniform(r, {5, 2, 3}), s::i64({4, 1}, {2})},
       [](auto& x) { return one(index_select(x[0], 0, x[1])); }},
      {"index_add dim 0, alpha 2, repeats",
       {s::uniform(r, {4, 3}), s::i64({1, 3, 1}, {3}), s::uniform(r, {3, 3})},
       [](auto& x) { return one(index_add(x[0], 0, x[1], x[2], 2.0)); }},
      {"index_add dim -1", {s::uniform(r, {2, 5}), s::i64({4, 0}, {2}), s::uniform(r, {2, 2})},
       [](auto& x) { return one(index_add(x[0], -1, x[1], x[2])); }},
      {"einsum bhqd,bhkd->bhqk", {s::uniform(r, {1, 2, 3, 4}), s::uniform(r, {1, 2, 5, 4})},
       [](auto& x) { return one(einsum("bhqd,bhkd->bhqk", x)); }},
      {"einsum bn,anm,bm->ba", {s::uniform(r, {3, 2}), s::uniform(r, {4, 2, 5}),
                                s::uniform(r, {3, 5})},
       [](auto& x) { return one(einsum("bn,anm,bm->ba", x)); }},
      {"einsum ...ij,...jk broadcast", {s::uniform(r, {2, 1, 3, 4}), s::uniform(r, {5, 4, 2})},
       [](auto& x) { return one(einsum("...ij,...jk", x)); }},
      {"einsum iij->ji", {s::uniform(r, {3, 3, 2})},
       [](auto& x) { return one(einsum("iij->ji", x)); }},
      {"diagonal offset 1, dims 2 and 0", {s::uniform(r, {3, 4, 5})},
       [](auto& x) { return one(diagonal(x[0], 1, 2, 0)); }},
      {"diag of a vector, offset -1", {s::uniform(r, {3})},
       [](auto& x) { return one(diag(x[0], -1)); }},
      {"trace", {s::uniform(r, {3, 4})}, [](auto& x) { return one(trace(x[0])); }},
      {"masked_select, mask broadcast", {s::uniform(r, {3, 4}),
                                         s::i64({1, 0, 0, 1}, {4}) > 0},
       [](auto& x) { return one(masked_select(x[0], x[1])); }},
      {"index by a mask over rows", {s::uniform(r, {3, 4}), s::i64({1, 0, 1}, {3}) > 0},
       [](auto& x) { return one(index(x[0], x[1])); }},
      {"index by ints, negative and repeated", {s::uniform(r, {3, 2}), s::i64({-1, 0, 2}, {3})},
       [](auto& x) { return one(index(x[0], x[1])); }},
      {"index_put accumulate with repeats",
       {s::uniform(r, {3, 2}), s::i64({1, 1, -1}, {3}), s::uniform(r, {3, 2})},
       [](auto& x) { return one(index_put(x[0], x[1], x[2], true)); }},
  };
}

TEST(IndexOps, GradientsMatchCentralDifferences) {
  testing::expect_gradients_match_central_differences(calls());
}

TEST(IndexOps, LazyMatchesEagerAtEveryOptLevel) {
  testing::expect_lazy_matches_eager(calls(), 0, 0);
}

}  // namespace
}  // namespace lt
