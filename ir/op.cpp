#include "ir/op.h"

#include <array>

namespace lt::ir {
namespace {

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
static_assert(std::size(kInFamily) == std::size(table::kInfo));

template <class FamilyOp>
std::optional<FamilyOp> as_family(Op op, OpFamily family) {
  if (info(op).family != family) return std::nullopt;
  return static_cast<FamilyOp>(kInFamily[static_cast<size_t>(op)]);
}

}  // namespace

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

}  // namespace lt::ir
