// Samples of the collective family. The test processes are jobs of one rank, where all_reduce
// is the identity (so are reduce_scatter and all_gather at world=1); tests/dist/ runs the same
// ops on two ranks against a reference.
#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {

std::vector<OpSample> collective_samples(ir::Op op, Rng& r) {
  using enum ir::CollectiveOp;
  switch (*ir::as_collective(op)) {
    case AllReduce: {
      OpSample max = make(op, "max [3]", {uniform(r, {3})}, ir::AllReduceAttrs{ir::ReduceKind::Max});
      max.differentiable = {false};  // max and min have no gradient
      return {make(op, "sum [2,3]", {uniform(r, {2, 3})}, ir::AllReduceAttrs{ir::ReduceKind::Sum}),
              make(op, "mean [4]", {uniform(r, {4})}, ir::AllReduceAttrs{ir::ReduceKind::Mean}),
              make(op, "sum i64 [3]", {ids(r, {3}, 9)}, ir::AllReduceAttrs{ir::ReduceKind::Sum}),
              make(op, "sum scalar", {uniform(r, {})}, ir::AllReduceAttrs{ir::ReduceKind::Sum}),
              std::move(max)};
    }
    case ReduceScatter:
      return {make(op, "sum [6]", {uniform(r, {6})},
                   ir::ReduceScatterAttrs{ir::ReduceKind::Sum, 1}),
              make(op, "mean [4]", {uniform(r, {4})},
                   ir::ReduceScatterAttrs{ir::ReduceKind::Mean, 1}),
              make(op, "sum i64 [3]", {ids(r, {3}, 9)},
                   ir::ReduceScatterAttrs{ir::ReduceKind::Sum, 1})};
    case AllGather:
      return {make(op, "[5]", {uniform(r, {5})}, ir::AllGatherAttrs{1}),
              make(op, "i64 [2]", {ids(r, {2}, 9)}, ir::AllGatherAttrs{1})};
  }
  return {};
}

}  // namespace lt::testing::samples
