// Samples of the reduce and view families: reductions over all, one, and non-adjacent axes with
// and without keepdim; views with strided slices, uneven concat and asymmetric padding.
#include <limits>

#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {
namespace {

ir::ReduceAttrs axes(ir::Ints a, bool keepdim = false) { return {std::move(a), keepdim}; }

// A max-pooling style pad. Forward checks only: -inf elements make the loss's differences NaN.
OpSample pad_with_minus_inf(Rng& r) {
  OpSample s = make(ir::Op::Pad, "[2,3] with -inf", {uniform(r, {2, 3})},
                    ir::PadAttrs{{1, 0}, {0, 2}, -std::numeric_limits<double>::infinity()});
  s.differentiable = {false};
  return s;
}

}  // namespace

std::vector<OpSample> reduce_samples(ir::Op op, Rng& r) {
  using enum ir::ReduceOp;
  const ir::ReduceOp e = *ir::as_reduce(op);
  switch (e) {
    case Sum: case Mean: case LogSumExp: {
      std::vector<OpSample> out = {
          make(op, "all axes of [2,3,4]", {uniform(r, {2, 3, 4})}, axes({})),
          make(op, "axis 1 keepdim", {uniform(r, {2, 3, 4})}, axes({1}, true)),
          make(op, "non-adjacent axes 0,2", {uniform(r, {2, 3, 4})}, axes({0, 2})),
          make(op, "axes 0,2 keepdim", {uniform(r, {2, 3, 4})}, axes({0, 2}, true)),
          make(op, "scalar input", {uniform(r, {})}, axes({})),
          make(op, "[5,4,7,6] axes 0,2 (two strided reduced runs)", {uniform(r, {5, 4, 7, 6})},
               axes({0, 2})),
          make(op, "[3,70,130] axes 1,2 keepdim (threads)", {uniform(r, {3, 70, 130})},
               axes({1, 2}, true)),
          make(op, "[300,70] axis 0", {uniform(r, {300, 70})}, axes({0})),
      };
      if (e == LogSumExp)  // exp(1000) overflows even f64: only the max shift makes this finite
        out.push_back(
            make(op, "logits near 1000 axis 1", {uniform(r, {3, 5}, 1000, 1003)}, axes({1})));
      if (e == Sum) out.push_back(make(op, "i64 axis 1", {ids(r, {3, 4}, 9)}, axes({1})));
      return out;
    }
    case ReduceMax: case ReduceMin:  // distinct values: no ties, so the gradient is one-hot
      return {make(op, "all axes of [2,3,4]", {distinct1(r, {2, 3, 4})}, axes({})),
              make(op, "axis 1 keepdim", {distinct1(r, {2, 3, 4})}, axes({1}, true)),
              make(op, "non-adjacent axes 0,2", {distinct1(r, {2, 3, 4})}, axes({0, 2})),
              make(op, "[5,4,7,6] axes 0,2", {distinct1(r, {5, 4, 7, 6})}, axes({0, 2})),
              make(op, "[40,90] axis 0", {distinct1(r, {40, 90})}, axes({0})),
              make(op, "i64 axis 0", {i64({3, -1, 4, 1, -5, 9}, {2, 3})}, axes({0}))};
    case Prod:  // away from 0, then with one and with two zeros along the axis (PyTorch's cases)
      return {make(op, "all axes of [2,3,4]", {uniform(r, {2, 3, 4}, 0.5, 1.5)}, axes({})),
              make(op, "axis 1 keepdim", {uniform(r, {2, 3, 4}, -1.5, -0.5)}, axes({1}, true)),
              make(op, "non-adjacent axes 0,2", {uniform(r, {2, 3, 4}, 0.5, 1.5)}, axes({0, 2})),
              make(op, "one zero in a row", {f64({1.5, 0, -2, 0.5, 3, 1}, {2, 3})}, axes({1})),
              make(op, "two zeros in a row", {f64({0, 2, 0, 1, -1, 2}, {2, 3})}, axes({1})),
              make(op, "[40,9] axis 0", {uniform(r, {40, 9}, 0.8, 1.25)}, axes({0})),
              make(op, "i64 axis 1", {i64({3, -1, 4, 1, -5, 9}, {2, 3})}, axes({1}))};
    case ArgMax: case ArgMin:
      return {make(op, "axis 1 of [3,4]", {distinct1(r, {3, 4})}, axes({1})),
              make(op, "axis 0 keepdim of [2,3,4]", {distinct1(r, {2, 3, 4})}, axes({0}, true)),
              make(op, "i64 axis 1", {i64({3, -1, 4, 1, -5, 9}, {2, 3})}, axes({1}))};
  }
  return {};
}

std::vector<OpSample> view_samples(ir::Op op, Rng& r) {
  using enum ir::ViewOp;
  switch (*ir::as_view(op)) {
    case Reshape:
      return {make(op, "[2,3,4] -> [4,6]", {uniform(r, {2, 3, 4})}, ir::ReshapeAttrs{{4, 6}}),
              make(op, "[2,3,4] -> [24]", {uniform(r, {2, 3, 4})}, ir::ReshapeAttrs{{24}}),
              make(op, "scalar -> [1,1]", {uniform(r, {})}, ir::ReshapeAttrs{{1, 1}}),
              make(op, "i64 [2,3] -> [3,2]", {ids(r, {2, 3}, 9)}, ir::ReshapeAttrs{{3, 2}})};
    case Permute:
      return {make(op, "[2,3,4] by [2,0,1]", {uniform(r, {2, 3, 4})}, ir::PermuteAttrs{{2, 0, 1}}),
              make(op, "[2,3,4] by [1,2,0]", {uniform(r, {2, 3, 4})}, ir::PermuteAttrs{{1, 2, 0}}),
              make(op, "transpose [2,3]", {uniform(r, {2, 3})}, ir::PermuteAttrs{{1, 0}}),
              make(op, "[3,70,37] swap last two (tiles with tails)", {uniform(r, {3, 70, 37})},
                   ir::PermuteAttrs{{0, 2, 1}}),
              make(op, "[2,3,4,5] by [3,1,0,2]", {uniform(r, {2, 3, 4, 5})},
                   ir::PermuteAttrs{{3, 1, 0, 2}}),
              make(op, "i64 [9,67] transpose", {ids(r, {9, 67}, 100)}, ir::PermuteAttrs{{1, 0}})};
    case Expand:
      return {make(op, "[3,1] -> [2,3,4]", {uniform(r, {3, 1})}, ir::ExpandAttrs{{2, 3, 4}}),
              make(op, "scalar -> [2,2]", {uniform(r, {})}, ir::ExpandAttrs{{2, 2}}),
              make(op, "[1,4] -> [3,4]", {uniform(r, {1, 4})}, ir::ExpandAttrs{{3, 4}})};
    case Slice:
      return {
          // Axis 0: 1,3 of 5 (stop not reached by the stride); axis 1: 0,3 of 6.
          make(op, "[5,6] steps 2 and 3", {uniform(r, {5, 6})},
               ir::SliceAttrs{{1, 0}, {5, 6}, {2, 3}}),
          make(op, "[7,4] step 3 and a plain range", {uniform(r, {7, 4})},
               ir::SliceAttrs{{1, 1}, {7, 3}, {3, 1}}),
          make(op, "[6] from 1 by 2 (last element taken)", {uniform(r, {6})},
               ir::SliceAttrs{{1}, {6}, {2}}),
          make(op, "[2,3,4] middle axis", {uniform(r, {2, 3, 4})},
               ir::SliceAttrs{{0, 1, 0}, {2, 3, 4}, {1, 1, 1}}),
          make(op, "[40,50] step 3 on both axes", {uniform(r, {40, 50})},
               ir::SliceAttrs{{2, 1}, {39, 50}, {3, 3}}),
          make(op, "empty result [3,4] rows 1:1", {uniform(r, {3, 4})},
               ir::SliceAttrs{{1, 0}, {1, 4}, {1, 1}}),
      };
    case Concat:
      return {make(op, "three along axis 1",
                   {uniform(r, {2, 1, 3}), uniform(r, {2, 3, 3}), uniform(r, {2, 2, 3})},
                   ir::ConcatAttrs{1}),
              make(op, "two along axis 0", {uniform(r, {2}), uniform(r, {3})}, ir::ConcatAttrs{0}),
              make(op, "last axis", {uniform(r, {2, 2}), uniform(r, {2, 1})}, ir::ConcatAttrs{1}),
              make(op, "with an empty piece", {uniform(r, {2, 0}), uniform(r, {2, 3})},
                   ir::ConcatAttrs{1}),
              make(op, "large [30,70] and [30,45] axis 1",
                   {uniform(r, {30, 70}), uniform(r, {30, 45})}, ir::ConcatAttrs{1})};
    case Pad:
      return {make(op, "[2,3] lo 1,0 hi 2,3 value 0.5", {uniform(r, {2, 3})},
                   ir::PadAttrs{{1, 0}, {2, 3}, 0.5}),
              make(op, "[2,3,2] middle and last axes", {uniform(r, {2, 3, 2})},
                   ir::PadAttrs{{0, 1, 0}, {0, 0, 1}, 0}),
              make(op, "i64 [3]", {ids(r, {3}, 9)}, ir::PadAttrs{{2}, {1}, -1}),
              make(op, "large [5,70,40] every axis", {uniform(r, {5, 70, 40})},
                   ir::PadAttrs{{1, 2, 3}, {2, 0, 5}, -0.25}),
              pad_with_minus_inf(r)};
  }
  return {};
}

}  // namespace lt::testing::samples
