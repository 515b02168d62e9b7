// The op enum and its info table, generated from the per-family tables in ir/ops/*.def (every
// fact about an op is a column of its row). A per-family enum makes each switch over a family
// exhaustive (no default:, -Werror=switch), so the compiler names every place a new row needs.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

#include "ir/attrs.h"
#include "ir/error.h"

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
  Float, Numeric, AnyType, Stored, Select, Mixed, Nothing, FloatWidensFirst, Gemm, Integral
};
/// The result dtype.
enum class ResultKind : uint8_t { Same, Bool, I64, Attr };
/// Whether the eager kernel checks the data at run time (and may throw).
enum class DataCheck : uint8_t { No, Yes, IfInt };
/// What a loop kernel may make of the op, whatever the backend (ir/loop_kernel.h).
enum class LoopForm : uint8_t { Elementwise, Reduction, IndexMap, None };

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
  LoopForm loop;
};

// The table is constexpr, so that code generic over the rows (ir/elementwise_scalar.h, the eager
// kernels, the scalar emitter) decides by a row's columns at compile time.
namespace table {

// The values of the fact columns, as the .def rows spell them.
inline constexpr bool Diff = true;
inline constexpr bool NoDiff = false;
using enum OperandKind;
using enum ResultKind;
using enum DataCheck;
using enum LoopForm;

constexpr OpFamily family_of(Op op) {
  switch (op) {
#define LT_OP(name, ...) case Op::name:
#include "ir/ops/elementwise.def"
    return OpFamily::Elementwise;
#include "ir/ops/reduce.def"
    return OpFamily::Reduce;
#include "ir/ops/view.def"
    return OpFamily::View;
#include "ir/ops/library.def"
    return OpFamily::Library;
#include "ir/ops/nn.def"
    return OpFamily::Nn;
#include "ir/ops/creation.def"
    return OpFamily::Creation;
#include "ir/ops/collective.def"
    return OpFamily::Collective;
#undef LT_OP
  }
  return OpFamily::Elementwise;
}

inline constexpr OpInfo kInfo[] = {
#define LT_OP(name, mn, arity, attrs, grad, operands, result, checks, loop)                  \
  {#name, mn, arity, family_of(Op::name), grad, AttrsIndex<attrs>::value, operands, result, \
   checks, loop},
#include "ir/ops/all.def"
#undef LT_OP
};

// A family's rows are consecutive in the Op enum: its first row, by family.
inline constexpr auto kFamilyStart = [] {
  std::array<size_t, 7> first{};
  for (size_t i = std::size(kInfo); i-- > 0;) first[static_cast<size_t>(kInfo[i].family)] = i;
  return first;
}();

template <class FamilyOp>
constexpr Op from_family(FamilyOp op, OpFamily family) {
  return static_cast<Op>(kFamilyStart[static_cast<size_t>(family)] + static_cast<size_t>(op));
}

}  // namespace table

constexpr const OpInfo& info(Op op) { return table::kInfo[static_cast<size_t>(op)]; }
inline std::string_view mnemonic(Op op) { return info(op).mnemonic; }
/// Whether a node of `op` with result dtype `result` checks its data at run time.
bool checks_data(Op op, DType result);
/// The operand whose dtype is the op's operand dtype: 1 for where (after the condition), else 0.
inline int data_operand(Op op) { return info(op).operands == OperandKind::Select ? 1 : 0; }
std::optional<Op> op_from_mnemonic(std::string_view m);
/// Every op, in table order.
std::span<const Op> all_ops();

/// Whether operands of the kind may be floats (f32, f64), integers (i32, i64), bool. Where
/// (Select): its branches; cast (Stored): its source.
constexpr bool takes_floats(OperandKind k) {
  return k != OperandKind::Nothing && k != OperandKind::Integral;
}
constexpr bool takes_integers(OperandKind k) {
  switch (k) {
    case OperandKind::Numeric: case OperandKind::AnyType: case OperandKind::Stored:
    case OperandKind::Select: case OperandKind::Mixed: case OperandKind::Integral: return true;
    case OperandKind::Float: case OperandKind::Nothing: case OperandKind::FloatWidensFirst:
    case OperandKind::Gemm: return false;
  }
  return false;
}
constexpr bool takes_bool(OperandKind k) {
  return k == OperandKind::AnyType || k == OperandKind::Stored || k == OperandKind::Select ||
         k == OperandKind::Integral;
}

/// The op as its family's enum, or nullopt when it is of another family.
std::optional<ElementwiseOp> as_elementwise(Op op);
std::optional<ReduceOp> as_reduce(Op op);
std::optional<ViewOp> as_view(Op op);
std::optional<LibraryOp> as_library(Op op);
std::optional<NnOp> as_nn(Op op);
std::optional<CreationOp> as_creation(Op op);
std::optional<CollectiveOp> as_collective(Op op);

/// A family's op as an Op.
constexpr Op to_op(ElementwiseOp op) { return table::from_family(op, OpFamily::Elementwise); }
constexpr Op to_op(ReduceOp op) { return table::from_family(op, OpFamily::Reduce); }
constexpr Op to_op(ViewOp op) { return table::from_family(op, OpFamily::View); }
constexpr Op to_op(LibraryOp op) { return table::from_family(op, OpFamily::Library); }
constexpr Op to_op(NnOp op) { return table::from_family(op, OpFamily::Nn); }
constexpr Op to_op(CreationOp op) { return table::from_family(op, OpFamily::Creation); }
constexpr Op to_op(CollectiveOp op) { return table::from_family(op, OpFamily::Collective); }
constexpr const OpInfo& info(ElementwiseOp op) { return info(to_op(op)); }

/// An elementwise row as a compile-time constant.
template <ElementwiseOp E>
using Row = std::integral_constant<ElementwiseOp, E>;

/// f(Row<op>{}): calls code generic over the rows (a template lambda,
/// `[&]<ElementwiseOp E>(Row<E>) {...}`) with the row known at compile time.
template <class F>
decltype(auto) visit_row(ElementwiseOp op, F&& f) {
  switch (op) {
#define LT_OP(name, ...) \
  case ElementwiseOp::name: return f(Row<ElementwiseOp::name>{});
#include "ir/ops/elementwise.def"
#undef LT_OP
  }
  LT_UNREACHABLE();
}

}  // namespace lt::ir
