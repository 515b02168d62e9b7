// One branch per elementwise.def row and register class its operand column takes, each
// ir/elementwise_scalar.h's meaning of the row (NaN-propagating maximum/minimum, relu(NaN) = 0,
// ordered comparisons, ne unordered), and the steps of the loop reductions (reduce.def rows of
// loop form Reduction).
#include "codegen/scalar_emitter.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <limits>

#include "ir/elementwise_scalar.h"
#include "ir/error.h"

namespace lt::codegen {
namespace {

using enum ir::ElementwiseOp;

llvm::Value* libm(Builder& b, llvm::Module& m, const char* f32_name, const char* f64_name,
                  llvm::Value* x) {
  llvm::Type* t = x->getType();
  const char* name = t->isFloatTy() ? f32_name : f64_name;
  llvm::FunctionCallee fn = m.getOrInsertFunction(name, t, t);
  return b.CreateCall(fn, {x});
}

llvm::Value* fconst(llvm::Value* like, double v) {
  return llvm::ConstantFP::get(like->getType(), v);
}

// expf inline, so that a loop computing it vectorizes at the full vector width with no calls
// (glibc's libmvec has 8-wide AVX2 versions only: a 16-wide loop became 8-wide around a call that
// clobbers every vector register). Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, Cephes's
// degree-5 polynomial for (e^r - 1 - r) / r^2 in fused multiply-adds, and 2^k as two powers of two
// (2^k alone is not a normal float below k = -126, where results are subnormal). Within 1 float
// ulp of e^x (codegen's LoopEmitter.InlineExpf test); 0 below -104, inf above 89, NaN kept.
llvm::Value* emit_expf(Builder& b, llvm::Value* x) {
  auto fma = [&](llvm::Value* p, llvm::Value* q, llvm::Value* r) {
    return b.CreateIntrinsic(llvm::Intrinsic::fma, {p->getType()}, {p, q, r});
  };
  llvm::Value* xc = b.CreateBinaryIntrinsic(
      llvm::Intrinsic::maxnum,
      b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, fconst(x, 89.0)), fconst(x, -104.0));
  llvm::Value* k = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint,
                                          b.CreateFMul(xc, fconst(x, 1.4426950408889634)));
  llvm::Value* r = fma(k, fconst(x, -0.693359375), xc);  // k ln2 in two parts: the first exact
  r = fma(k, fconst(x, 2.12194440e-4), r);
  constexpr double kP[] = {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2,
                           8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4};
  llvm::Value* p = fconst(x, kP[5]);
  for (int i = 4; i >= 0; --i) p = fma(p, r, fconst(x, kP[i]));
  llvm::Value* e = b.CreateFAdd(fma(p, b.CreateFMul(r, r), r), fconst(x, 1.0));
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* ki = b.CreateFPToSI(k, i32);
  llvm::Value* half = b.CreateAShr(ki, 1);
  auto pow2 = [&](llvm::Value* n) {  // 2^n for n in [-126, 127]
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(n, b.getInt32(127)), 23), x->getType());
  };
  llvm::Value* y = b.CreateFMul(b.CreateFMul(e, pow2(half)), pow2(b.CreateSub(ki, half)));
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* emit_exp(Builder& b, llvm::Value* x) {
  if (x->getType()->isFloatTy()) return emit_expf(b, x);
  return b.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
}

using Args = std::span<llvm::Value* const>;

template <ir::ElementwiseOp E>
constexpr bool kNoEmitter = false;

// Row E on float registers (f32, f64): ir::scalar::<Row>'s meaning in LLVM IR, one branch per
// row. Every row whose operand column takes floats has one (emit_elementwise asks for it).
template <ir::ElementwiseOp E>
llvm::Value* emit_float(Builder& b, llvm::Module& m, Args x) {
  llvm::Value* a = x[0];
  if constexpr (E == Neg) {
    return b.CreateFNeg(a);
  } else if constexpr (E == Abs) {
    // x < 0 ? -x : x, as the eager kernel and fold compute it: abs(-0.0) stays -0.0 (fabs would
    // give +0.0, and 1/abs(x) then +inf where the reference gives -inf).
    return b.CreateSelect(b.CreateFCmpOLT(a, fconst(a, 0)), b.CreateFNeg(a), a);
  } else if constexpr (E == Exp) {
    return emit_exp(b, a);
  } else if constexpr (E == Expm1) {
    return libm(b, m, "expm1f", "expm1", a);
  } else if constexpr (E == Log) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::log, a);
  } else if constexpr (E == Log1p) {
    return libm(b, m, "log1pf", "log1p", a);
  } else if constexpr (E == Sqrt) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
  } else if constexpr (E == Rsqrt) {
    return b.CreateFDiv(fconst(a, 1), b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a));
  } else if constexpr (E == Tanh) {
    return libm(b, m, "tanhf", "tanh", a);
  } else if constexpr (E == Sigmoid) {
    llvm::Value* e = emit_exp(b, b.CreateFNeg(a));
    return b.CreateFDiv(fconst(a, 1), b.CreateFAdd(fconst(a, 1), e));
  } else if constexpr (E == Relu) {
    return b.CreateSelect(b.CreateFCmpOGT(a, fconst(a, 0)), a, fconst(a, 0));
  } else if constexpr (E == Gelu) {  // ir::scalar::Gelu::formula, with libm's tanh
    llvm::Value* a3 = b.CreateFMul(b.CreateFMul(a, a), a);
    llvm::Value* inner =
        b.CreateFMul(fconst(a, ir::scalar::kGeluScale),
                     b.CreateFAdd(a, b.CreateFMul(fconst(a, ir::scalar::kGeluCubic), a3)));
    llvm::Value* t = libm(b, m, "tanhf", "tanh", inner);
    return b.CreateFMul(b.CreateFMul(fconst(a, 0.5), a), b.CreateFAdd(fconst(a, 1), t));
  } else if constexpr (E == Sin) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sin, a);
  } else if constexpr (E == Cos) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::cos, a);
  } else if constexpr (E == Floor) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
  } else if constexpr (E == Ceil) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
  } else if constexpr (E == Round) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, a);
  } else if constexpr (E == Trunc) {
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, a);
  } else if constexpr (E == Reciprocal) {
    return b.CreateFDiv(fconst(a, 1), a);
  } else if constexpr (E == Erf) {
    if (!a->getType()->isFloatTy()) return libm(b, m, "erff", "erf", a);
    // ir::scalar::Erf's rational form, term by term (libm's erff would be a call per element).
    const auto& P = ir::scalar::kErfP;
    const auto& Q = ir::scalar::kErfQ;
    llvm::Value* lim = fconst(a, ir::scalar::kErfClamp);
    llvm::Value* c = b.CreateSelect(b.CreateFCmpOLT(a, b.CreateFNeg(lim)), b.CreateFNeg(lim),
                                    b.CreateSelect(b.CreateFCmpOGT(a, lim), lim, a));
    llvm::Value* t = b.CreateFMul(c, c);
    auto fma = [&](llvm::Value* x, llvm::Value* y, llvm::Value* z) {
      return b.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
    };
    llvm::Value* p = fconst(a, P[6]);
    for (int i = 5; i >= 0; --i) p = fma(p, t, fconst(a, P[i]));
    llvm::Value* q = fconst(a, Q[4]);
    for (int i = 3; i >= 0; --i) q = fma(q, t, fconst(a, Q[i]));
    return b.CreateFDiv(b.CreateFMul(c, p), q);
  } else if constexpr (E == GeluErf) {  // ir::scalar::GeluErf
    llvm::Value* u = b.CreateFMul(a, fconst(a, ir::scalar::kSqrtHalf));
    llvm::Value* e = emit_float<Erf>(b, m, {&u, 1});
    return b.CreateFMul(b.CreateFMul(fconst(a, 0.5), a), b.CreateFAdd(fconst(a, 1), e));
  } else if constexpr (E == GeluErfGrad) {
    // ir::scalar::GeluErfGrad; its erf is gelu_erf's, which LLVM merges.
    llvm::Value* u = b.CreateFMul(a, fconst(a, ir::scalar::kSqrtHalf));
    llvm::Value* e = emit_float<Erf>(b, m, {&u, 1});
    llvm::Value* cdf = b.CreateFMul(fconst(a, 0.5), b.CreateFAdd(fconst(a, 1), e));
    llvm::Value* g = emit_exp(b, b.CreateFMul(b.CreateFMul(fconst(a, -0.5), a), a));
    llvm::Value* pdf = b.CreateFMul(g, fconst(a, ir::scalar::kInvSqrt2Pi));
    return b.CreateFAdd(cdf, b.CreateFMul(a, pdf));
  } else if constexpr (E == IsFinite) {
    return b.CreateFCmpONE(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a),
                           fconst(a, std::numeric_limits<double>::infinity()));
  } else if constexpr (E == Add) {
    return b.CreateFAdd(a, x[1]);
  } else if constexpr (E == Sub) {
    return b.CreateFSub(a, x[1]);
  } else if constexpr (E == Mul) {
    return b.CreateFMul(a, x[1]);
  } else if constexpr (E == Div) {
    return b.CreateFDiv(a, x[1]);
  } else if constexpr (E == Pow) {
    return b.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, x[1]);
  } else if constexpr (E == Maximum) {
    return b.CreateSelect(b.CreateOr(b.CreateFCmpOGT(a, x[1]), b.CreateFCmpUNO(a, a)), a, x[1]);
  } else if constexpr (E == Minimum) {
    return b.CreateSelect(b.CreateOr(b.CreateFCmpOLT(a, x[1]), b.CreateFCmpUNO(a, a)), a, x[1]);
  } else if constexpr (E == Fmod) {
    return b.CreateFRem(a, x[1]);
  } else if constexpr (E == Remainder) {  // ir::scalar::Remainder: frem is C's fmod
    llvm::Value* d = x[1];
    llvm::Value* r = b.CreateFRem(a, d);
    llvm::Value* other_sign = b.CreateXor(b.CreateFCmpOLT(r, fconst(r, 0)),
                                          b.CreateFCmpOLT(d, fconst(d, 0)));
    return b.CreateSelect(b.CreateAnd(b.CreateFCmpUNE(r, fconst(r, 0)), other_sign),
                          b.CreateFAdd(r, d), r);
  } else if constexpr (E == FloorDivide) {  // ir::scalar::FloorDivide, step by step
    llvm::Value* d = x[1];
    llvm::Value* zero = fconst(a, 0);
    llvm::Value* quotient = b.CreateFDiv(a, d);
    llvm::Value* mod = b.CreateFRem(a, d);
    llvm::Value* div = b.CreateFDiv(b.CreateFSub(a, mod), d);
    llvm::Value* other_sign =
        b.CreateXor(b.CreateFCmpOLT(d, zero), b.CreateFCmpOLT(mod, zero));
    div = b.CreateSelect(b.CreateAnd(b.CreateFCmpUNE(mod, zero), other_sign),
                         b.CreateFSub(div, fconst(a, 1)), div);
    llvm::Value* fl = b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
    fl = b.CreateSelect(b.CreateFCmpOGT(b.CreateFSub(div, fl), fconst(a, 0.5)),
                        b.CreateFAdd(fl, fconst(a, 1)), fl);
    llvm::Value* signed_zero =
        b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, quotient);
    llvm::Value* r = b.CreateSelect(b.CreateFCmpOEQ(div, zero), signed_zero, fl);
    return b.CreateSelect(b.CreateFCmpOEQ(d, zero), quotient, r);
  } else if constexpr (E == Eq) {
    return b.CreateFCmpOEQ(a, x[1]);
  } else if constexpr (E == Ne) {
    return b.CreateFCmpUNE(a, x[1]);
  } else if constexpr (E == Lt) {
    return b.CreateFCmpOLT(a, x[1]);
  } else if constexpr (E == Le) {
    return b.CreateFCmpOLE(a, x[1]);
  } else if constexpr (E == Gt) {
    return b.CreateFCmpOGT(a, x[1]);
  } else if constexpr (E == Ge) {
    return b.CreateFCmpOGE(a, x[1]);
  } else if constexpr (E == Where) {
    return b.CreateSelect(a, x[1], x[2]);
  } else {
    static_assert(kNoEmitter<E>, "an elementwise row that takes floats needs a branch here");
  }
}

// Row E on integer registers (i32, i64; i1 for bool): one branch per row whose operand column
// takes integers or bool and whose integer form checks no data (integer division stays in its
// eager kernel: the backend's KernelRules::computes).
template <ir::ElementwiseOp E>
llvm::Value* emit_int(Builder& b, Args x) {
  llvm::Value* a = x[0];
  llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  if constexpr (E == Neg) {
    return b.CreateNeg(a);
  } else if constexpr (E == Abs) {
    return b.CreateSelect(b.CreateICmpSLT(a, zero), b.CreateNeg(a), a);
  } else if constexpr (E == Relu) {
    return b.CreateSelect(b.CreateICmpSGT(a, zero), a, zero);
  } else if constexpr (E == IsFinite) {
    return b.getTrue();
  } else if constexpr (E == Add) {
    return b.CreateAdd(a, x[1]);
  } else if constexpr (E == Sub) {
    return b.CreateSub(a, x[1]);
  } else if constexpr (E == Mul) {
    return b.CreateMul(a, x[1]);
  } else if constexpr (E == Pow) {  // ir::scalar::Pow: by squaring over every exponent bit
    llvm::Value* one = llvm::ConstantInt::get(a->getType(), 1);
    llvm::Value* e = x[1];
    llvm::Value* r = one;
    llvm::Value* base = a;
    const unsigned bits = a->getType()->getIntegerBitWidth();
    for (unsigned i = 0; i + 1 < bits; ++i) {  // the sign bit: negative exponents below
      llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(b.CreateLShr(e, i), one), zero);
      r = b.CreateSelect(bit, b.CreateMul(r, base), r);
      base = b.CreateMul(base, base);
    }
    llvm::Value* minus_one = llvm::ConstantInt::getSigned(a->getType(), -1);
    llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(e, one), zero);
    llvm::Value* negative =
        b.CreateSelect(b.CreateICmpEQ(a, one), one,
                       b.CreateSelect(b.CreateICmpEQ(a, minus_one),
                                      b.CreateSelect(odd, minus_one, one), zero));
    return b.CreateSelect(b.CreateICmpSLT(e, zero), negative, r);
  } else if constexpr (E == Maximum) {
    return b.CreateSelect(b.CreateICmpSGT(a, x[1]), a, x[1]);
  } else if constexpr (E == Minimum) {
    return b.CreateSelect(b.CreateICmpSLT(a, x[1]), a, x[1]);
  } else if constexpr (E == Eq) {
    return b.CreateICmpEQ(a, x[1]);
  } else if constexpr (E == Ne) {
    return b.CreateICmpNE(a, x[1]);
  } else if constexpr (E == Lt) {
    return b.CreateICmpSLT(a, x[1]);
  } else if constexpr (E == Le) {
    return b.CreateICmpSLE(a, x[1]);
  } else if constexpr (E == Gt) {
    return b.CreateICmpSGT(a, x[1]);
  } else if constexpr (E == Ge) {
    return b.CreateICmpSGE(a, x[1]);
  } else if constexpr (E == Where) {
    return b.CreateSelect(a, x[1], x[2]);
  } else if constexpr (E == BitwiseNot) {  // i1 too: not is xor with all ones
    return b.CreateNot(a);
  } else if constexpr (E == BitwiseAnd) {
    return b.CreateAnd(a, x[1]);
  } else if constexpr (E == BitwiseOr) {
    return b.CreateOr(a, x[1]);
  } else if constexpr (E == BitwiseXor) {
    return b.CreateXor(a, x[1]);
  } else {
    static_assert(kNoEmitter<E>, "an elementwise row that takes integers needs a branch here");
  }
}

// bf16 lives in registers as its bits (i16), and converts through f32 with integer operations
// that vectorize on any x86 (no libcall, no AVX512-BF16 needed), rounding as the eager kernels
// do (Eigen's bfloat16): to nearest even, NaN to the quiet NaN of its sign.
llvm::Value* bf16_to_f32(Builder& b, llvm::Value* bits) {
  llvm::Value* wide = b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16);
  return b.CreateBitCast(wide, b.getFloatTy());
}

llvm::Value* f32_to_bf16(Builder& b, llvm::Value* f) {
  llvm::Value* bits = b.CreateBitCast(f, b.getInt32Ty());
  llvm::Value* lsb = b.CreateAnd(b.CreateLShr(bits, 16), b.getInt32(1));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff))), 16);
  llvm::Value* nan = b.CreateOr(b.CreateAnd(b.CreateLShr(bits, 16), b.getInt32(0x8000)),
                                b.getInt32(0x7fc0));
  llvm::Value* is_nan = b.CreateFCmpUNO(f, f);
  return b.CreateTrunc(b.CreateSelect(is_nan, nan, rounded), b.getInt16Ty());
}

llvm::Value* emit_cast(Builder& b, llvm::Value* v, DType from, DType to) {
  if (from == to) return v;
  if (from == DType::BF16) return emit_cast(b, bf16_to_f32(b, v), DType::F32, to);
  if (to == DType::BF16) return f32_to_bf16(b, emit_cast(b, v, from, DType::F32));
  // f16 converts through f32 as Eigen's half does (an f64 is rounded to f32 first): with F16C
  // these are its instructions, elsewhere LLVM's libcalls, both rounding to nearest even.
  if (from == DType::F16)
    return emit_cast(b, b.CreateFPExt(v, b.getFloatTy()), DType::F32, to);
  if (to == DType::F16)
    return b.CreateFPTrunc(emit_cast(b, v, from, DType::F32), b.getHalfTy());
  llvm::Type* t = register_type(b, to);
  if (to == DType::Bool)
    return is_float(from) ? b.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0))
                          : b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (from == DType::Bool) return is_float(to) ? b.CreateUIToFP(v, t) : b.CreateZExt(v, t);
  if (is_float(from) && is_float(to)) return b.CreateFPCast(v, t);
  // Saturating, NaN to 0: defined for every input, as the eager kernels compute it.
  if (is_float(from))
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {t, v->getType()}, {v});
  if (is_float(to)) return b.CreateSIToFP(v, t);
  return b.CreateSExtOrTrunc(v, t);
}

}  // namespace

llvm::Type* register_type(Builder& b, DType t) {
  switch (t) {
    case DType::Bool: return b.getInt1Ty();
    case DType::I32: return b.getInt32Ty();
    case DType::I64: return b.getInt64Ty();
    case DType::F32: return b.getFloatTy();
    case DType::F64: return b.getDoubleTy();
    case DType::F16: return b.getHalfTy();
    case DType::BF16: return b.getInt16Ty();  // its bits: see f32_to_bf16
  }
  LT_UNREACHABLE();
}

llvm::Type* storage_type(Builder& b, DType t) {
  return t == DType::Bool ? b.getInt8Ty() : register_type(b, t);
}

llvm::Value* constant(Builder& b, DType t, double v) {
  if (t == DType::Bool) return b.getInt1(v != 0);
  if (t == DType::BF16) return f32_to_bf16(b, constant(b, DType::F32, v));  // folds
  if (t == DType::F16) return llvm::ConstantFP::get(b.getHalfTy(), double(float(v)));
  llvm::Type* rt = register_type(b, t);
  if (is_float(t)) return llvm::ConstantFP::get(rt, t == DType::F32 ? double(float(v)) : v);
  return llvm::ConstantInt::get(rt, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
}

llvm::Value* reduction_identity(Builder& b, ir::ReduceOp op, DType t) {
  auto limit = [&](bool lowest) -> double {
    const double m = t == DType::F32 ? std::numeric_limits<float>::max()
                                     : std::numeric_limits<double>::max();
    return lowest ? -m : m;
  };
  switch (op) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::Mean: return constant(b, t, 0);
    case ir::ReduceOp::Prod: return constant(b, t, 1);
    case ir::ReduceOp::ReduceMax:
    case ir::ReduceOp::ReduceMin: {
      const bool max = op == ir::ReduceOp::ReduceMax;
      if (is_float(t)) return constant(b, t, limit(max));
      const unsigned bits = register_type(b, t)->getIntegerBitWidth();
      return b.getInt(max ? llvm::APInt::getSignedMinValue(bits)
                          : llvm::APInt::getSignedMaxValue(bits));
    }
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::ArgMin:
    case ir::ReduceOp::LogSumExp: break;  // lowering Call: no loop reduction
  }
  LT_UNREACHABLE();
}

// The eager kernels' steps: a + x; (x > a || x is NaN) ? x : a; (x < a || x is NaN) ? x : a.
// `reassoc` lets LLVM split a float sum into vector partial sums (any order is within the
// tolerance a sum has; max and min stay in order so their result is exact).
llvm::Value* reduction_step(Builder& b, ir::ReduceOp op, llvm::Value* acc, llvm::Value* x,
                            bool reassoc) {
  const bool flt = x->getType()->isFloatingPointTy();
  switch (op) {
    case ir::ReduceOp::Sum:
    case ir::ReduceOp::Mean: {
      if (!flt) return b.CreateAdd(acc, x);
      auto* sum = llvm::cast<llvm::Instruction>(b.CreateFAdd(acc, x));
      if (reassoc) sum->setHasAllowReassoc(true);
      return sum;
    }
    case ir::ReduceOp::Prod: {
      if (!flt) return b.CreateMul(acc, x);
      auto* product = llvm::cast<llvm::Instruction>(b.CreateFMul(acc, x));
      if (reassoc) product->setHasAllowReassoc(true);
      return product;
    }
    case ir::ReduceOp::ReduceMax:
    case ir::ReduceOp::ReduceMin: {
      const bool max = op == ir::ReduceOp::ReduceMax;
      llvm::Value* better =
          flt ? b.CreateOr(max ? b.CreateFCmpOGT(x, acc) : b.CreateFCmpOLT(x, acc),
                           b.CreateFCmpUNO(x, x))
              : (max ? b.CreateICmpSGT(x, acc) : b.CreateICmpSLT(x, acc));
      return b.CreateSelect(better, x, acc);
    }
    case ir::ReduceOp::ArgMax:
    case ir::ReduceOp::ArgMin:
    case ir::ReduceOp::LogSumExp: break;  // lowering Call: no loop reduction
  }
  LT_UNREACHABLE();
}

// By the row's columns: cast (result Attr) through emit_cast; float operands through
// emit_float, integer and bool ones through emit_int, for the rows whose operand column takes
// them (the type rule and the backend's KernelRules::computes keep the rest out).
llvm::Value* emit_elementwise(Builder& b, llvm::Module& m, ir::ElementwiseOp op,
                              std::span<llvm::Value* const> x, DType in, DType out) {
  return ir::visit_row(op, [&]<ir::ElementwiseOp E>(ir::Row<E>) -> llvm::Value* {
    constexpr ir::OpInfo row = ir::info(E);
    if constexpr (row.result == ir::ResultKind::Attr) {
      return emit_cast(b, x[0], in, out);
    } else {
      if constexpr (ir::takes_floats(row.operands))
        if (is_float(in)) return emit_float<E>(b, m, x);
      constexpr bool ints = ir::takes_integers(row.operands) || ir::takes_bool(row.operands);
      if constexpr (ints && row.checks == ir::DataCheck::No)
        if (!is_float(in)) return emit_int<E>(b, x);
      LT_UNREACHABLE();
    }
  });
}

}  // namespace lt::codegen
