#include "ir/op.h"

#include <array>

namespace lt::ir {
namespace {

// The values of the fact columns, as the .def rows spell them.
constexpr bool Diff = true;
constexpr bool NoDiff = false;
using enum OperandKind;
using enum ResultKind;
using enum DataCheck;
using enum Lowering;

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

constexpr OpInfo kInfo[] = {
#define LT_OP(name, mn, arity, attrs, grad, operands, result, checks, lowering)              \
  {#name, mn, arity, family_of(Op::name), grad, AttrsIndex<attrs>::value, operands, result, \
   checks, lowering},
#include "ir/ops/all.def"
#undef LT_OP
};

constexpr std::array kAllOps = {
#define LT_OP(name, ...) Op::name,
#include "ir/ops/all.def"
#undef LT_OP
};

// Each op's enumerator value in its family's enum.
constexpr uint8_t kInFamily[] = {
#define LT_OP(name, ...) static_cast<uint8_t>(ElementwiseOp::name),
#include "ir/ops/elementwise.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(ReduceOp::name),
#include "ir/ops/reduce.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(ViewOp::name),
#include "ir/ops/view.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(LibraryOp::name),
#include "ir/ops/library.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(NnOp::name),
#include "ir/ops/nn.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(CreationOp::name),
#include "ir/ops/creation.def"
#undef LT_OP
#define LT_OP(name, ...) static_cast<uint8_t>(CollectiveOp::name),
#include "ir/ops/collective.def"
#undef LT_OP
};
static_assert(std::size(kInFamily) == std::size(kAllOps));

template <class FamilyOp>
std::optional<FamilyOp> as_family(Op op, OpFamily family) {
  if (info(op).family != family) return std::nullopt;
  return static_cast<FamilyOp>(kInFamily[static_cast<size_t>(op)]);
}

// A family's rows are consecutive in the Op enum: its first row, by family.
constexpr auto kFamilyStart = [] {
  std::array<size_t, 7> first{};
  for (size_t i = std::size(kInfo); i-- > 0;) first[static_cast<size_t>(kInfo[i].family)] = i;
  return first;
}();

template <class FamilyOp>
Op from_family(FamilyOp op, OpFamily family) {
  return static_cast<Op>(kFamilyStart[static_cast<size_t>(family)] + static_cast<size_t>(op));
}

}  // namespace

const OpInfo& info(Op op) { return kInfo[static_cast<size_t>(op)]; }

std::optional<Op> op_from_mnemonic(std::string_view m) {
  for (Op op : kAllOps)
    if (info(op).mnemonic == m) return op;
  return std::nullopt;
}

std::span<const Op> all_ops() { return kAllOps; }

bool checks_data(Op op, DType result) {
  switch (info(op).checks) {
    case DataCheck::No: return false;
    case DataCheck::Yes: return true;
    case DataCheck::IfInt: return is_integer(result);
  }
  return true;
}

std::optional<ElementwiseOp> as_elementwise(Op op) {
  return as_family<ElementwiseOp>(op, OpFamily::Elementwise);
}
std::optional<ReduceOp> as_reduce(Op op) { return as_family<ReduceOp>(op, OpFamily::Reduce); }
std::optional<ViewOp> as_view(Op op) { return as_family<ViewOp>(op, OpFamily::View); }
std::optional<LibraryOp> as_library(Op op) { return as_family<LibraryOp>(op, OpFamily::Library); }
std::optional<NnOp> as_nn(Op op) { return as_family<NnOp>(op, OpFamily::Nn); }
std::optional<CreationOp> as_creation(Op op) {
  return as_family<CreationOp>(op, OpFamily::Creation);
}
std::optional<CollectiveOp> as_collective(Op op) {
  return as_family<CollectiveOp>(op, OpFamily::Collective);
}

Op to_op(ElementwiseOp op) { return from_family(op, OpFamily::Elementwise); }
Op to_op(ReduceOp op) { return from_family(op, OpFamily::Reduce); }
Op to_op(ViewOp op) { return from_family(op, OpFamily::View); }
Op to_op(LibraryOp op) { return from_family(op, OpFamily::Library); }
Op to_op(NnOp op) { return from_family(op, OpFamily::Nn); }
Op to_op(CreationOp op) { return from_family(op, OpFamily::Creation); }
Op to_op(CollectiveOp op) { return from_family(op, OpFamily::Collective); }

}  // namespace lt::ir
