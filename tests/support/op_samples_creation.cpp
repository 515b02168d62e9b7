// Samples of the creation family: constants, ramps and random draws (seeded key and counter).
#include "tests/support/op_samples_builders.h"

namespace lt::testing::samples {

std::vector<OpSample> creation_samples(ir::Op op, Rng&) {
  using enum ir::CreationOp;
  switch (*ir::as_creation(op)) {
    case Full:
      return {make(op, "f64 [2,3]", {}, ir::FullAttrs{{2, 3}, DType::F64, 1.5}),
              make(op, "i64 scalar", {}, ir::FullAttrs{{}, DType::I64, -3}),
              make(op, "empty [0,2]", {}, ir::FullAttrs{{0, 2}, DType::F64, 2})};
    case Iota:
      return {make(op, "f64 from 0.5 by 0.25", {}, ir::IotaAttrs{5, DType::F64, 0.5, 0.25}),
              make(op, "i64 from 2 by 3", {}, ir::IotaAttrs{4, DType::I64, 2, 3})};
    case RandUniform:
    case RandNormal:
      return {make(op, "f64 [3,5]", {i64({1234}, {}), i64({7}, {})},
                   ir::RandomAttrs{{3, 5}, DType::F64}),
              make(op, "f64 [2] (partial Philox block)", {i64({-5}, {}), i64({0}, {})},
                   ir::RandomAttrs{{2}, DType::F64})};
  }
  return {};
}

}  // namespace lt::testing::samples
