#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/op.h"
#include "ir/type_rules.h"

namespace lt::ir {
namespace {

TensorType f32(Shape s) { return {DType::F32, std::move(s)}; }

TEST(OpTable, MnemonicsAreUniqueAndRoundTrip) {
  for (Op op : all_ops()) {
    auto back = op_from_mnemonic(mnemonic(op));
    ASSERT_TRUE(back.has_value()) << mnemonic(op);
    EXPECT_EQ(*back, op) << mnemonic(op);
  }
}

TEST(OpTable, FamilyCastsAgreeWithInfo) {
  for (Op op : all_ops()) {
    const OpFamily f = info(op).family;
    EXPECT_EQ(as_elementwise(op).has_value(), f == OpFamily::Elementwise) << mnemonic(op);
    EXPECT_EQ(as_reduce(op).has_value(), f == OpFamily::Reduce) << mnemonic(op);
    EXPECT_EQ(as_view(op).has_value(), f == OpFamily::View) << mnemonic(op);
    EXPECT_EQ(as_library(op).has_value(), f == OpFamily::Library) << mnemonic(op);
    EXPECT_EQ(as_nn(op).has_value(), f == OpFamily::Nn) << mnemonic(op);
    EXPECT_EQ(as_creation(op).has_value(), f == OpFamily::Creation) << mnemonic(op);
  }
}

TEST(TypeRules, Broadcast) {
  const TensorType in[] = {f32({4, 1, 3}), f32({5, 1})};
  auto out = infer_types(Op::Add, in, NoAttrs{});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], f32({4, 5, 3}));
}

TEST(TypeRules, ComparisonsReturnBool) {
  const TensorType in[] = {f32({2}), f32({2})};
  EXPECT_EQ(infer_types(Op::Lt, in, NoAttrs{})[0].dtype, DType::Bool);
}

TEST(TypeRules, ReduceKeepdim) {
  const TensorType in[] = {f32({2, 3, 4})};
  EXPECT_EQ(infer_types(Op::Sum, in, ReduceAttrs{{0, 2}, true})[0], f32({1, 3, 1}));
  EXPECT_EQ(infer_types(Op::Sum, in, ReduceAttrs{{0, 2}, false})[0], f32({3}));
  EXPECT_EQ(infer_types(Op::Sum, in, ReduceAttrs{{}, false})[0], f32({}));
}

TEST(TypeRules, MatMulBatchBroadcastAndTransposes) {
  const TensorType in[] = {f32({2, 1, 5, 3}), f32({4, 5, 7})};
  EXPECT_EQ(infer_types(Op::MatMul, in, MatMulAttrs{true, false})[0], f32({2, 4, 3, 7}));
}

TEST(TypeRules, ConvOutputShape) {
  const TensorType in[] = {f32({2, 4, 9, 9}), f32({6, 2, 3, 3})};
  ConvAttrs a{{2, 2}, {1, 1}, {1, 1}, 2, {}};
  EXPECT_EQ(infer_types(Op::Conv2d, in, a)[0], f32({2, 6, 5, 5}));
}

TEST(TypeRules, SliceWithStep) {
  const TensorType in[] = {f32({10, 3})};
  SliceAttrs a{{1, 0}, {10, 3}, {3, 1}};
  EXPECT_EQ(infer_types(Op::Slice, in, a)[0], f32({3, 3}));
}

TEST(TypeRules, ArityAndAttrKindAreChecked) {
  const TensorType one[] = {f32({2})};
  EXPECT_THROW(infer_types(Op::Add, one, NoAttrs{}), TypeError);
  EXPECT_THROW(infer_types(Op::Sum, one, NoAttrs{}), TypeError);
}

TEST(TypeRules, FloatOnlyOpsRejectIntegers) {
  const TensorType in[] = {{DType::I32, {3}}};
  try {
    infer_types(Op::Exp, in, NoAttrs{});
    FAIL() << "no error";
  } catch (const TypeError& e) {
    EXPECT_STREQ(e.what(), "needs a float operand, got i32[3]");
  }
}

TEST(Attrs, PrintAndHash) {
  EXPECT_EQ(attrs_str(ReduceAttrs{{1, 2}, true}), "{axes=[1,2], keepdim=true}");
  EXPECT_EQ(attrs_str(NoAttrs{}), "");
  EXPECT_EQ(attrs_str(NormAttrs{1e-5}), "{eps=1e-05}");
  EXPECT_NE(attrs_hash(ReduceAttrs{{1}, true}), attrs_hash(ReduceAttrs{{1}, false}));
  EXPECT_NE(attrs_hash(ReshapeAttrs{{2, 3}}), attrs_hash(ExpandAttrs{{2, 3}}));
  EXPECT_EQ(attrs_hash(ReduceAttrs{{1}, true}), attrs_hash(ReduceAttrs{{1}, true}));
}

}  // namespace
}  // namespace lt::ir
