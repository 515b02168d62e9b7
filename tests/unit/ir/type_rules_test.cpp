#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

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

/// The TypeError text of infer_types(op, in, a), or a note that it threw none.
std::string type_error(Op op, std::span<const TensorType> in, const Attrs& a) {
  try {
    infer_types(op, in, a);
  } catch (const TypeError& e) {
    return e.what();
  }
  return "(no TypeError)";
}

TEST(TypeRules, AttributeValuesMustFitTheDtype) {
  // Found by fuzz_ir_compile (tests/fuzz/regressions/): the kernels convert these values to the
  // dtype, which is undefined past its range.
  EXPECT_EQ(type_error(Op::Full, {}, FullAttrs{{}, DType::I32, 2147485823.0}),
            "value 2147485823 does not fit i32");
  EXPECT_EQ(type_error(Op::Full, {}, FullAttrs{{2}, DType::I64, NAN}), "value nan does not fit i64");
  EXPECT_EQ(type_error(Op::Iota, {}, IotaAttrs{4, DType::I32, 2147483646.0, 1.0}),
            "values 2147483646 to 2147483649 do not fit i32");
  const TensorType ints[] = {{DType::I32, {3}}};
  EXPECT_EQ(type_error(Op::Pad, ints, PadAttrs{{1}, {0}, -1e10}), "value -10000000000 does not fit i32");
  // In range (truncated toward zero, as casts do), and any value for floats and bools.
  EXPECT_EQ(infer_types(Op::Full, {}, FullAttrs{{}, DType::I32, -2147483648.9})[0].dtype,
            DType::I32);
  EXPECT_EQ(infer_types(Op::Full, {}, FullAttrs{{}, DType::Bool, NAN})[0].dtype, DType::Bool);
  EXPECT_EQ(infer_types(Op::Full, {}, FullAttrs{{}, DType::F32, 1e300})[0].dtype, DType::F32);
}

// The GEMM-like rows are the ones of operand column Gemm; pooling, also a library row, is f32 or
// f64 only.
TEST(TypeRules, GemmColumnTakesNarrowOperands) {
  for (Op op : all_ops())
    EXPECT_EQ(info(op).operands == OperandKind::Gemm,
              op == Op::MatMul || op == Op::Conv2d || op == Op::Conv2dInputGrad ||
                  op == Op::Conv2dWeightGrad)
        << mnemonic(op);
  const TensorType pool_in[] = {{DType::BF16, {1, 2, 4, 4}}};
  EXPECT_EQ(type_error(Op::MaxPool2d, pool_in, PoolAttrs{}), "needs f32 or f64, got bf16[1,2,4,4]");
}

// f32_out: bf16 and f16 operands give the f32 accumulator; other dtypes have none to give.
TEST(TypeRules, GemmsWithF32OutOnNarrowOperandsGiveF32) {
  for (DType narrow : {DType::BF16, DType::F16}) {
    const TensorType mm[] = {{narrow, {5, 3}}, {narrow, {3, 7}}};
    EXPECT_EQ(infer_types(Op::MatMul, mm, MatMulAttrs{false, false, true})[0], f32({5, 7}));
    EXPECT_EQ(infer_types(Op::MatMul, mm, MatMulAttrs{false, false, false})[0],
              TensorType(narrow, {5, 7}));
    ConvAttrs c{{1, 1}, {1, 1}, {1, 1}, 1, {}};
    c.f32_out = true;
    const TensorType x{narrow, {2, 4, 6, 6}}, w{narrow, {8, 4, 3, 3}}, y{narrow, {2, 8, 6, 6}};
    const TensorType conv[] = {x, w};
    EXPECT_EQ(infer_types(Op::Conv2d, conv, c)[0], f32({2, 8, 6, 6}));
    c.grad_shape = {2, 4, 6, 6};
    const TensorType input_grad[] = {y, w};
    EXPECT_EQ(infer_types(Op::Conv2dInputGrad, input_grad, c)[0], f32({2, 4, 6, 6}));
    c.grad_shape = {8, 4, 3, 3};
    const TensorType weight_grad[] = {x, y};
    EXPECT_EQ(infer_types(Op::Conv2dWeightGrad, weight_grad, c)[0], f32({8, 4, 3, 3}));
  }
  const TensorType mm[] = {f32({5, 3}), f32({3, 7})};
  EXPECT_EQ(type_error(Op::MatMul, mm, MatMulAttrs{false, false, true}),
            "f32_out needs bf16 or f16 operands, got f32");
  ConvAttrs c{{1, 1}, {1, 1}, {1, 1}, 1, {}};
  c.f32_out = true;
  const TensorType conv[] = {f32({2, 4, 6, 6}), f32({8, 4, 3, 3})};
  EXPECT_EQ(type_error(Op::Conv2d, conv, c), "f32_out needs bf16 or f16 operands, got f32");
}

TEST(TypeRules, BatchNormReadsANarrowInputWidened) {
  // The rows that say FloatWidensFirst: x may be bf16 or f16 where the rest is f32, and the
  // results are f32.
  for (Op op : all_ops())
    EXPECT_EQ(info(op).operands == OperandKind::FloatWidensFirst,
              op == Op::BatchNorm || op == Op::BatchNormGrad)
        << mnemonic(op);
  const TensorType c = f32({3});
  for (DType narrow : {DType::BF16, DType::F16}) {
    const TensorType x{narrow, {4, 3, 2}};
    const TensorType bn_in[] = {x, c, c, c, c};
    const TypeList bn = infer_types(Op::BatchNorm, bn_in, BatchNormAttrs{1e-5, 0.1, 1});
    EXPECT_EQ(bn[0], f32({4, 3, 2}));
    EXPECT_EQ(bn[1], c);
    const TensorType grad_in[] = {x, c, c, c, f32({4, 3, 2})};
    const TypeList grad = infer_types(Op::BatchNormGrad, grad_in, BatchNormGradAttrs{1});
    EXPECT_EQ(grad[0], f32({4, 3, 2}));
    EXPECT_EQ(grad[2], c);
  }
  const TensorType x16{DType::BF16, {4, 3, 2}}, c16{DType::BF16, {3}};
  const TensorType narrow_all[] = {x16, c16, c16, c16, c16};
  EXPECT_EQ(type_error(Op::BatchNorm, narrow_all, BatchNormAttrs{1e-5, 0.1, 1}),
            "input bf16[4,3,2] needs an f32 gamma, got bf16[3]");
  const TensorType narrow_grad[] = {x16, c, c, c, {DType::BF16, {4, 3, 2}}};
  EXPECT_EQ(type_error(Op::BatchNormGrad, narrow_grad, BatchNormGradAttrs{1}),
            "grad must be f32[4,3,2], got bf16[4,3,2]");
  const TensorType ln_in[] = {{DType::BF16, {4, 3}}, c, c};
  EXPECT_EQ(type_error(Op::LayerNorm, ln_in, NormAttrs{1e-5}),
            "input must be f32 or f64, got bf16[4,3]");
}

TEST(TypeRules, BatchNormGradGivesABf16DxOfAnF32Gradient) {
  // bf16_dx: dx in bf16, the rest as without it; only where the gradient is computed in f32.
  const TensorType c = f32({3});
  for (DType x : {DType::F32, DType::BF16}) {
    const TensorType grad_in[] = {{x, {4, 3, 2}}, c, c, c, f32({4, 3, 2})};
    const TypeList grad = infer_types(Op::BatchNormGrad, grad_in, BatchNormGradAttrs{1, true});
    EXPECT_EQ(grad[0], (TensorType{DType::BF16, {4, 3, 2}}));
    EXPECT_EQ(grad[1], c);
    EXPECT_EQ(grad[2], c);
  }
  const TensorType d{DType::F64, {3}}, x64{DType::F64, {4, 3, 2}};
  const TensorType f64_in[] = {x64, d, d, d, x64};
  EXPECT_EQ(type_error(Op::BatchNormGrad, f64_in, BatchNormGradAttrs{1, true}),
            "bf16_dx needs an f32 gradient, got f64[4,3,2]");
}

TEST(TypeRules, ShapeArithmeticNeverOverflows) {
  // Found by fuzz_ir_lower's checks on hand-written inputs (UBSan: signed overflow in pad,
  // slice, concat, conv and pool shape arithmetic). Results past kMaxElements are errors.
  const int64_t big = INT64_MAX;
  const TensorType x[] = {f32({3})};
  EXPECT_EQ(type_error(Op::Pad, x, PadAttrs{{big}, {big}, 0}),
            "result shape [9223372036854775807] is negative or past 281474976710656 elements");
  EXPECT_EQ(type_error(Op::Pad, x, PadAttrs{{int64_t{1} << 48}, {0}, 0}),
            "result shape [281474976710659] is negative or past 281474976710656 elements");
  EXPECT_EQ(infer_types(Op::Slice, x, SliceAttrs{{1}, {3}, {big}})[0], f32({1}));
  EXPECT_EQ(infer_types(Op::Slice, x, SliceAttrs{{3}, {3}, {big}})[0], f32({0}));
  const TensorType halves[] = {f32({int64_t{1} << 47}), f32({int64_t{1} << 47}), f32({1})};
  EXPECT_EQ(type_error(Op::Concat, halves, ConcatAttrs{0}),
            "result shape [281474976710657] is negative or past 281474976710656 elements");
  const TensorType conv[] = {f32({1, 2, 5, 5}), f32({4, 1, 3, 3})};
  EXPECT_EQ(type_error(Op::Conv2d, conv, ConvAttrs{{1, 1}, {big, 0}, {1, 1}, 2, {}}),
            "bad stride/padding/dilation [1,1]/[9223372036854775807,0]/[1,1]");
  const int64_t most = int64_t{1} << 48;  // kMaxElements
  EXPECT_EQ(type_error(Op::Conv2d, conv, ConvAttrs{{1, 1}, {0, 0}, {most, 1}, 2, {}}),
            "kernel [4,1,3,3] does not fit input [1,2,5,5]");
  EXPECT_EQ(infer_types(Op::Conv2d, conv, ConvAttrs{{most, 1}, {most, 0}, {1, 1}, 2, {}})[0],
            f32({1, 4, 3, 3}));
  EXPECT_EQ(type_error(Op::Conv2d, conv, ConvAttrs{{1, 1}, {0, 0}, {1, 1}, big, {}}),
            "groups=9223372036854775807 must divide in channels 2 and out channels 4");
  const TensorType empty[] = {f32({1, 0, 5, 5}), f32({0, 3, 3, 3})};
  EXPECT_EQ(type_error(Op::Conv2d, empty, ConvAttrs{{1, 1}, {0, 0}, {1, 1}, most, {}}),
            "weight [0,3,3,3] expects 844424930131968 input channels, input has 0");
  const TensorType img[] = {f32({1, 1, 4, 4})};
  EXPECT_EQ(type_error(Op::MaxPool2d, img, PoolAttrs{{big, 3}, {1, 1}, {big / 2, 0}, {}}),
            "bad kernel/stride/padding [9223372036854775807,3]/[1,1]/[4611686018427387903,0]");
  EXPECT_EQ(infer_types(Op::MaxPool2d, img, PoolAttrs{{most, 3}, {1, 1}, {most / 2, 0}, {}})[0],
            f32({1, 1, 5, 2}));
  EXPECT_EQ(type_error(Op::Reshape, x, ReshapeAttrs{{4294967296, 4294967296, 0}}),
            "cannot reshape f32[3] to [4294967296,4294967296,0]");
  EXPECT_EQ(type_error(Op::Full, {}, FullAttrs{{1 << 25, 1 << 24}, DType::F32, 0}),
            "result shape [33554432,16777216] is negative or past 281474976710656 elements");
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
