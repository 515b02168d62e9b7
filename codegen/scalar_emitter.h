// Scalar LLVM IR for one elementwise op (the codegen half of an elementwise.def row) and for the
// steps of a loop reduction. Values are in register form: i1 for bool, iN for integers,
// float/double.
#pragma once
#include <span>

#include "ir/dtype.h"
#include "ir/op.h"

namespace llvm {
class Module;
class Type;
class Value;
template <typename FolderTy, typename InserterTy>
class IRBuilder;
class ConstantFolder;
class IRBuilderDefaultInserter;
}  // namespace llvm

namespace lt::codegen {

using Builder = llvm::IRBuilder<llvm::ConstantFolder, llvm::IRBuilderDefaultInserter>;

/// The register type of a dtype (bool -> i1; bf16 -> i16, its bits, which only casts read).
llvm::Type* register_type(Builder& b, DType t);
/// The in-memory type of a dtype (bool -> i8).
llvm::Type* storage_type(Builder& b, DType t);

/// `op` applied to x (operand dtypes `in`, result dtype `out`, attributes for cast).
llvm::Value* emit_elementwise(Builder& b, llvm::Module& m, ir::ElementwiseOp op,
                              std::span<llvm::Value* const> x, DType in, DType out);

/// v as a constant of dtype t (f32: rounded to float first; bf16: then to bf16's bits).
llvm::Value* constant(Builder& b, DType t, double v);

/// The start value of a loop reduction (sum, mean: 0; max: the lowest value; min: the highest)
/// of dtype t (not bool).
llvm::Value* reduction_identity(Builder& b, ir::ReduceOp op, DType t);
/// acc combined with x by the reduction (a sum's add, or max/min as the eager kernels take
/// them: NaN wins); `reassoc` lets LLVM reorder a float sum.
llvm::Value* reduction_step(Builder& b, ir::ReduceOp op, llvm::Value* acc, llvm::Value* x,
                            bool reassoc);

}  // namespace lt::codegen
