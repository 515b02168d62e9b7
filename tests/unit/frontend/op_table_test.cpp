// Table-driven checks over every op in ir/ops/*.def, through lt::apply with the shared samples:
// the op runs in f64 and f32, the f32 result matches the f64 one, and the types infer_types
// promises are the types the outputs have.
#include <gtest/gtest.h>

#include <string>

#include "ir/op.h"
#include "ir/type_rules.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/op_samples.h"

namespace lt {
namespace {

using testing::OpSample;

std::vector<ir::Op> every_op() { return {ir::all_ops().begin(), ir::all_ops().end()}; }

/// out's dtype when the sample runs at f32 instead of f64.
DType narrowed(DType t) { return t == DType::F64 ? DType::F32 : t; }

void expect_types_inferred(const OpSample& s) {
  std::vector<TensorType> in;
  for (const Tensor& t : s.inputs) in.push_back(t.type());
  const std::vector<TensorType> want = ir::infer_types(s.op, in, s.attrs);
  const std::vector<Tensor> outs = testing::run_sample(s);
  ASSERT_EQ(outs.size(), want.size());
  for (size_t k = 0; k < outs.size(); ++k)
    EXPECT_EQ(type_str(outs[k].type()), type_str(want[k])) << "output " << k;
}

class OpTable : public ::testing::TestWithParam<ir::Op> {};

TEST_P(OpTable, InferTypesMatchOutputs) {
  for (const OpSample& s : testing::samples_for(GetParam())) {
    SCOPED_TRACE(s.label());
    expect_types_inferred(s);
    if (testing::takes_floats(s)) {
      SCOPED_TRACE("at f32");
      expect_types_inferred(testing::at_dtype(s, DType::F32));
    }
  }
}

TEST_P(OpTable, F32MatchesF64) {
  for (const OpSample& s : testing::samples_for(GetParam())) {
    SCOPED_TRACE(s.label());
    for (const Tensor& t : s.inputs)
      EXPECT_NE(t.dtype(), DType::F32) << "samples hold f64 floats; at_dtype makes the f32 ones";
    const std::vector<Tensor> wide = testing::run_sample(s);
    if (!testing::takes_floats(s)) continue;  // integer-only sample: nothing to narrow
    const std::vector<Tensor> narrow = testing::run_sample(testing::at_dtype(s, DType::F32));
    ASSERT_EQ(narrow.size(), wide.size());
    for (size_t k = 0; k < wide.size(); ++k) {
      SCOPED_TRACE("output " + std::to_string(k));
      EXPECT_EQ(narrow[k].dtype(), narrowed(wide[k].dtype()));
      const bool exact = !is_float(wide[k].dtype());  // bools, indices, truncated casts
      EXPECT_TRUE(
          testing::AllClose(narrow[k], wide[k], exact ? 0 : s.f32_atol, exact ? 0 : s.f32_rtol))
          << "f32 (actual) vs f64 (expected)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, OpTable, ::testing::ValuesIn(every_op()),
                         [](const ::testing::TestParamInfo<ir::Op>& p) {
                           return std::string(ir::info(p.param).name);
                         });

TEST(OpTableCoverage, EveryOpHasSamples) {
  for (ir::Op op : ir::all_ops()) {
    const std::vector<OpSample> samples = testing::samples_for(op);
    EXPECT_FALSE(samples.empty()) << ir::mnemonic(op)
                                  << " has no sample in tests/support/op_samples*.cpp";
    for (const OpSample& s : samples) {
      EXPECT_EQ(s.op, op) << s.label();
      EXPECT_EQ(s.differentiable.size(), s.inputs.size()) << s.label();
    }
  }
}

TEST(OpTableCoverage, FloatOpsAreExercisedAtF32) {
  // Every op that can take or make floats has at least one sample that does.
  for (ir::Op op : ir::all_ops()) {
    bool any = false;
    for (const OpSample& s : testing::samples_for(op)) any = any || testing::takes_floats(s);
    EXPECT_TRUE(any) << ir::mnemonic(op);
  }
}

}  // namespace
}  // namespace lt
