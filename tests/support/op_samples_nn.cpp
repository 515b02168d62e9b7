// Samples of the nn family. Labels and ids are i64 (one i32 case each) and repeat,
// so scatter-adds in the gradients see collisions.
#include <algorithm>
#include <numeric>

#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {
namespace {

/// Layer norm (x, gamma, beta), or batch norm (x, gamma, beta, running_mean, running_var). Only
/// output 0 carries a gradient (the statistics feed running statistics under no_grad), so
/// gradcheck seeds output 0 alone.
/// Batch norm's channel axis is `bn_axis`.
OpSample norm(ir::Op op, Rng& r, std::string name, Shape x, Shape g, double eps = 1e-5,
              int64_t bn_axis = 1) {
  std::vector<Tensor> in = {uniform(r, std::move(x)), uniform(r, g, 0.5, 1.5),
                            uniform(r, g, -1, 1)};
  ir::Attrs attrs = ir::NormAttrs{eps};
  if (op == ir::Op::BatchNorm) {
    in.push_back(uniform(r, g, -1, 1));
    in.push_back(uniform(r, g, 0.5, 1.5));
    attrs = ir::BatchNormAttrs{eps, 0.25, bn_axis};
  }
  OpSample s = make(op, std::move(name), std::move(in), std::move(attrs));
  s.grad_outputs = 1;
  return s;
}

/// An i64 index of `shape` whose lines along `axis` hold distinct values in [0, limit)
/// (limit >= shape[axis]): scatter writes each element of x at most once, so every element of
/// src reaches the result and its gradient is the gathered one.
Tensor distinct_along(Rng& r, const Shape& shape, int64_t axis, int64_t limit) {
  const std::span<const int64_t> dims(shape);
  const int64_t n = shape[axis], inner = numel(dims.subspan(axis + 1));
  std::vector<int64_t> v(numel(shape));
  std::vector<int64_t> pool(limit);
  for (int64_t line = 0; line < numel(shape) / std::max<int64_t>(1, n); ++line) {
    std::iota(pool.begin(), pool.end(), int64_t{0});
    for (int64_t k = 0; k < n; ++k) {  // a partial Fisher-Yates shuffle
      std::swap(pool[k], pool[k + r.below(limit - k)]);
      const int64_t o = line / inner, j = line % inner;
      v[(o * n + k) * inner + j] = pool[k];
    }
  }
  return i64(std::move(v), shape);
}

}  // namespace

std::vector<OpSample> nn_samples(ir::Op op, Rng& r) {
  using enum ir::NnOp;
  switch (*ir::as_nn(op)) {
    case BatchNorm:
      return {norm(op, r, "[4,3,2,2] (spatial)", {4, 3, 2, 2}, {3}),
              norm(op, r, "[6,3] eps 0.1", {6, 3}, {3}, 0.1),
              norm(op, r, "large [8,16,5,5]", {8, 16, 5, 5}, {16}),
              norm(op, r, "channels-last [2,3,3,10] (axis 3)", {2, 3, 3, 10}, {10}, 1e-5, 3)};
    case BatchNormGrad: {
      // (x, gamma, mean, invstd, gy): any statistics are valid operands of the formula.
      const auto grad = [&](std::string name, Shape x, int64_t axis = 1) {
        const Shape c{x[axis]};
        return make(op, std::move(name),
                    {uniform(r, x), uniform(r, c, 0.5, 1.5), uniform(r, c, -0.5, 0.5),
                     uniform(r, c, 0.5, 2), uniform(r, x)},
                    ir::BatchNormGradAttrs{axis});
      };
      return {grad("[4,3,2,2] (spatial)", {4, 3, 2, 2}), grad("[6,3] (no spatial dims)", {6, 3}),
              grad("large [8,16,5,5]", {8, 16, 5, 5}),
              grad("channels-last [2,3,3,10] (axis 3)", {2, 3, 3, 10}, 3)};
    }
    case LayerNorm:
      return {norm(op, r, "[2,3,4] over the last axis", {2, 3, 4}, {4}),
              norm(op, r, "[2,3,4] over the last two axes, eps 1e-3", {2, 3, 4}, {3, 4}, 1e-3),
              norm(op, r, "[5] over everything (no batch dims)", {5}, {5}),
              norm(op, r, "large [33,300]", {33, 300}, {300})};
    case LayerNormGrad: {
      // (x, gamma, mean, rstd, gy): any statistics are valid operands of the formula.
      const auto grad = [&](std::string name, Shape x, Shape g) {
        const Shape stats(x.begin(), x.end() - static_cast<std::ptrdiff_t>(g.size()));
        return make(op, std::move(name),
                    {uniform(r, x), uniform(r, g, 0.5, 1.5), uniform(r, stats, -0.5, 0.5),
                     uniform(r, stats, 0.5, 2), uniform(r, x)});
      };
      return {grad("[2,3,4] over the last axis", {2, 3, 4}, {4}),
              grad("[2,3,4] over the last two axes", {2, 3, 4}, {3, 4}),
              grad("[5] over everything (no batch dims)", {5}, {5}),
              grad("large [700,48] (more rows than chunks)", {700, 48}, {48})};
    }
    case Softmax:
    case LogSoftmax:
      return {make(op, "[2,3,4] axis 1 (middle)", {uniform(r, {2, 3, 4})}, ir::AxisAttrs{1}),
              make(op, "[3,5] last axis", {uniform(r, {3, 5}, -3, 3)}, ir::AxisAttrs{1}),
              make(op, "[4] axis 0", {uniform(r, {4})}, ir::AxisAttrs{0}),
              make(op, "logits near 1000 (max shift)", {uniform(r, {3, 5}, 1000, 1003)},
                   ir::AxisAttrs{1}),
              make(op, "[2,3,300] axis 1 (two inner tiles)", {uniform(r, {2, 3, 300})},
                   ir::AxisAttrs{1}),
              make(op, "[40,301] last axis (threads, tails)", {uniform(r, {40, 301})},
                   ir::AxisAttrs{1})};
    case CrossEntropy:
      return {make(op, "[4,5] i64 labels", {uniform(r, {4, 5}), i64({1, 0, 4, 1}, {4})},
                   ir::CrossEntropyAttrs{0}),
              make(op, "label smoothing 0.1", {uniform(r, {4, 5}), i64({3, 3, 0, 2}, {4})},
                   ir::CrossEntropyAttrs{0.1}),
              make(op, "[3,2] i32 labels",
                   {uniform(r, {3, 2}), from_vector<int32_t>({1, 0, 1}, {3})},
                   ir::CrossEntropyAttrs{0}),
              make(op, "logits near 1000", {uniform(r, {3, 4}, 1000, 1003), i64({0, 3, 1}, {3})},
                   ir::CrossEntropyAttrs{0.2}),
              make(op, "large [64,100]", {uniform(r, {64, 100}), ids(r, {64}, 100)},
                   ir::CrossEntropyAttrs{0})};
    case Embedding:
      return {make(op, "table [6,3], ids [2,4] with repeats",
                   {uniform(r, {6, 3}), i64({0, 2, 2, 5, 1, 0, 3, 2}, {2, 4})}),
              make(op, "i32 ids [3]", {uniform(r, {4, 2}), from_vector<int32_t>({3, 3, 0}, {3})}),
              make(op, "scalar id", {uniform(r, {4, 2}), i64({1}, {})}),
              make(op, "large table [50,40], 200 ids",
                   {uniform(r, {50, 40}), ids(r, {8, 25}, 50)})};
    case EmbeddingGrad:
      return {make(op, "grad [2,4,3], ids with repeats, 6 rows",
                   {uniform(r, {2, 4, 3}), i64({0, 2, 2, 5, 1, 0, 3, 2}, {2, 4})},
                   ir::EmbeddingGradAttrs{6}),
              make(op, "large: 200 ids into [50,40]", {uniform(r, {200, 40}), ids(r, {200}, 50)},
                   ir::EmbeddingGradAttrs{50})};
    case OneHot:
      return {make(op, "ids [2,3] -> f64", {ids(r, {2, 3}, 5)}, ir::OneHotAttrs{5, DType::F64}),
              make(op, "ids [4] -> i64", {ids(r, {4}, 3)}, ir::OneHotAttrs{3, DType::I64})};
    case Cumsum:
      return {make(op, "[3,4] axis 1", {uniform(r, {3, 4})}, ir::CumsumAttrs{1, false}),
              make(op, "[2,3,4] axis 1 reversed", {uniform(r, {2, 3, 4})},
                   ir::CumsumAttrs{1, true}),
              make(op, "[5] axis 0", {uniform(r, {5})}, ir::CumsumAttrs{0, false}),
              make(op, "large [40,301] axis 0 (threads)", {uniform(r, {40, 301})},
                   ir::CumsumAttrs{0, false}),
              make(op, "i64 [2,3] axis 1", {ids(r, {2, 3}, 9)}, ir::CumsumAttrs{1, false})};
    case TopK:  // distinct values: the order is the same in f32
      return {make(op, "k 2 of [3,5] axis 1", {distinct1(r, {3, 5})}, ir::TopKAttrs{2, 1, true}),
              make(op, "k 3 smallest of [2,6,3] axis 1", {distinct1(r, {2, 6, 3})},
                   ir::TopKAttrs{3, 1, false}),
              make(op, "k = size, [4] axis 0", {distinct1(r, {4})}, ir::TopKAttrs{4, 0, true}),
              make(op, "k 0", {distinct1(r, {2, 3})}, ir::TopKAttrs{0, 1, true}),
              make(op, "large [30,200] k 5 axis 1", {distinct1(r, {30, 200})},
                   ir::TopKAttrs{5, 1, true}),
              make(op, "i64 with ties, k 2 axis 1", {i64({3, 1, 3, 2, 2, 5}, {2, 3})},
                   ir::TopKAttrs{2, 1, true})};
    case Gather:
      return {make(op, "[4,3] axis 0, index [2,3] with repeats",
                   {uniform(r, {4, 3}), i64({0, 3, 3, 1, 0, 3}, {2, 3})}, ir::AxisAttrs{0}),
              make(op, "[3,5] axis 1, index [2,7]: fewer rows, more columns",
                   {uniform(r, {3, 5}), ids(r, {2, 7}, 5)}, ir::AxisAttrs{1}),
              make(op, "[2,3,4] axis 1, index [2,5,3]",
                   {uniform(r, {2, 3, 4}), ids(r, {2, 5, 3}, 3)}, ir::AxisAttrs{1}),
              make(op, "i64 values [3,4] axis 1", {ids(r, {3, 4}, 100), ids(r, {3, 2}, 4)},
                   ir::AxisAttrs{1}),
              make(op, "large [64,300] axis 0 (threads)",
                   {uniform(r, {64, 300}), ids(r, {64, 300}, 64)}, ir::AxisAttrs{0})};
    case ScatterAdd:
      return {make(op, "[4,3] axis 0, index [3,3] with repeats",
                   {uniform(r, {4, 3}), ids(r, {3, 3}, 4), uniform(r, {3, 3})}, ir::AxisAttrs{0}),
              make(op, "[3,5] axis 1, index [2,6] within src [3,7]",
                   {uniform(r, {3, 5}), ids(r, {2, 6}, 5), uniform(r, {3, 7})}, ir::AxisAttrs{1}),
              make(op, "[2,3,4] axis 2", {uniform(r, {2, 3, 4}), ids(r, {2, 3, 4}, 4),
                                          uniform(r, {2, 3, 4})}, ir::AxisAttrs{2}),
              make(op, "i64 [3,4] axis 0, index [5,4]",
                   {ids(r, {3, 4}, 9), ids(r, {5, 4}, 3), ids(r, {5, 4}, 9)}, ir::AxisAttrs{0}),
              make(op, "large [64,300] axis 1 (threads)",
                   {uniform(r, {64, 300}), ids(r, {64, 300}, 300), uniform(r, {64, 300})},
                   ir::AxisAttrs{1})};
    case OptBarrier:
      return {make(op, "one f64 [2,3]", {uniform(r, {2, 3})}),
              make(op, "f64, i64 and bool", {uniform(r, {3}), ids(r, {2, 2}, 9), bools(r, {4})})};
    case Scatter:
      return {make(op, "[4,3] axis 0, index [3,3]",
                   {uniform(r, {4, 3}), distinct_along(r, {3, 3}, 0, 4), uniform(r, {3, 3})},
                   ir::AxisAttrs{0}),
              make(op, "[3,5] axis 1, index [2,4] within src [3,6]",
                   {uniform(r, {3, 5}), distinct_along(r, {2, 4}, 1, 5), uniform(r, {3, 6})},
                   ir::AxisAttrs{1}),
              make(op, "[2,3,4] axis 1", {uniform(r, {2, 3, 4}), distinct_along(r, {2, 3, 4}, 1, 3),
                                          uniform(r, {2, 3, 4})}, ir::AxisAttrs{1}),
              make(op, "bool [3,4] axis 1", {bools(r, {3, 4}), distinct_along(r, {3, 2}, 1, 4),
                                             bools(r, {3, 2})}, ir::AxisAttrs{1}),
              make(op, "large [64,300] axis 1 (threads)",
                   {uniform(r, {64, 300}), distinct_along(r, {64, 200}, 1, 300),
                    uniform(r, {64, 200})}, ir::AxisAttrs{1})};
  }
  return {};
}

}  // namespace lt::testing::samples
