// The op enum and its info table, generated from the per-family tables in ir/ops/*.def (every
// fact about an op is a column of its row). A per-family enum makes each switch over a family
// exhaustive (no default:, -Werror=switch), so the compiler names every place a new row needs.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "ir/attrs.h"

namespace lt::ir {

enum class Op : uint8_t {
#define LT_OP(name, ...) name,
#include "ir/ops/all.def"
#undef LT_OP
};

#define LT_OP(name, ...) name,
enum class ElementwiseOp : uint8_t {
#include "ir/ops/elementwise.def"
};
enum class ReduceOp : uint8_t {
#include "ir/ops/reduce.def"
};
enum class ViewOp : uint8_t {
#include "ir/ops/view.def"
};
enum class LibraryOp : uint8_t {
#include "ir/ops/library.def"
};
enum class NnOp : uint8_t {
#include "ir/ops/nn.def"
};
enum class CreationOp : uint8_t {
#include "ir/ops/creation.def"
};
enum class CollectiveOp : uint8_t {
#include "ir/ops/collective.def"
};
#undef LT_OP

enum class OpFamily : uint8_t { Elementwise, Reduce, View, Library, Nn, Creation, Collective };

inline constexpr int kVariadic = -1;

// The fact columns of the rows; ir/ops/all.def says what each value means.

/// The operand dtypes an op's type rule takes.
enum class OperandKind : uint8_t {
  Float, Numeric, AnyType, Stored, Select, Mixed, Nothing, FloatWidensFirst
};
/// The result dtype.
enum class ResultKind : uint8_t { Same, Bool, I64, Attr };
/// Whether the eager kernel checks the data at run time (and may throw).
enum class DataCheck : uint8_t { No, Yes, IfInt };
/// How a compiled step runs the op.
enum class Lowering : uint8_t { Loop, LoopReduce, IndexMap, Call, Epilogue, ImgEpilogue };

struct OpInfo {
  std::string_view name;      // enumerator name, "MatMul"
  std::string_view mnemonic;  // IR text name, "matmul"
  int arity;                  // number of inputs, or kVariadic
  OpFamily family;
  bool differentiable;
  size_t attrs_index;  // which Attrs alternative the op carries
  OperandKind operands;
  ResultKind result;
  DataCheck checks;
  Lowering lowering;
};

const OpInfo& info(Op op);
inline std::string_view mnemonic(Op op) { return info(op).mnemonic; }
/// Whether a node of `op` with result dtype `result` checks its data at run time.
bool checks_data(Op op, DType result);
/// The operand whose dtype is the op's operand dtype: 1 for where (after the condition), else 0.
inline int data_operand(Op op) { return info(op).operands == OperandKind::Select ? 1 : 0; }
std::optional<Op> op_from_mnemonic(std::string_view m);
/// Every op, in table order.
std::span<const Op> all_ops();

/// The op as its family's enum, or nullopt when it is of another family.
std::optional<ElementwiseOp> as_elementwise(Op op);
std::optional<ReduceOp> as_reduce(Op op);
std::optional<ViewOp> as_view(Op op);
std::optional<LibraryOp> as_library(Op op);
std::optional<NnOp> as_nn(Op op);
std::optional<CreationOp> as_creation(Op op);
std::optional<CollectiveOp> as_collective(Op op);

/// A family's op as an Op.
Op to_op(ElementwiseOp op);
Op to_op(ReduceOp op);
Op to_op(ViewOp op);
Op to_op(LibraryOp op);
Op to_op(NnOp op);
Op to_op(CreationOp op);
Op to_op(CollectiveOp op);

}  // namespace lt::ir
