// Scalar LLVM IR for one elementwise op: the codegen half of an elementwise.def row. Values are
// in register form: i1 for bool, iN for integers, float/double.
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

/// The register type of a dtype (bool -> i1).
llvm::Type* register_type(Builder& b, DType t);
/// The in-memory type of a dtype (bool -> i8).
llvm::Type* storage_type(Builder& b, DType t);

/// `op` applied to x (operand dtypes `in`, result dtype `out`, attributes for cast).
llvm::Value* emit_elementwise(Builder& b, llvm::Module& m, ir::ElementwiseOp op,
                              std::span<llvm::Value* const> x, DType in, DType out);

/// Whether emit_elementwise handles op on these dtypes.
bool can_emit_elementwise(ir::ElementwiseOp op, DType in, DType out);

}  // namespace lt::codegen
