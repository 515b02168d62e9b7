#include "ir/op.h"

#include <array>

namespace lt::ir {
namespace {

constexpr bool Diff = true;
constexpr bool NoDiff = false;

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
#undef LT_OP
  }
  return OpFamily::Elementwise;
}

constexpr OpInfo kInfo[] = {
#define LT_OP(name, mn, arity, attrs, grad) \
  {#name, mn, arity, family_of(Op::name), grad, AttrsIndex<attrs>::value},
#include "ir/ops/all.def"
#undef LT_OP
};

constexpr std::array kAllOps = {
#define LT_OP(name, ...) Op::name,
#include "ir/ops/all.def"
#undef LT_OP
};

}  // namespace

const OpInfo& info(Op op) { return kInfo[static_cast<size_t>(op)]; }

std::optional<Op> op_from_mnemonic(std::string_view m) {
  for (Op op : kAllOps)
    if (info(op).mnemonic == m) return op;
  return std::nullopt;
}

std::span<const Op> all_ops() { return kAllOps; }

#define LT_OP(name, ...) case Op::name: return ElementwiseOp::name;
std::optional<ElementwiseOp> as_elementwise(Op op) {
  switch (op) {
#include "ir/ops/elementwise.def"
    default: return std::nullopt;
  }
}
#undef LT_OP
#define LT_OP(name, ...) case Op::name: return ReduceOp::name;
std::optional<ReduceOp> as_reduce(Op op) {
  switch (op) {
#include "ir/ops/reduce.def"
    default: return std::nullopt;
  }
}
#undef LT_OP
#define LT_OP(name, ...) case Op::name: return ViewOp::name;
std::optional<ViewOp> as_view(Op op) {
  switch (op) {
#include "ir/ops/view.def"
    default: return std::nullopt;
  }
}
#undef LT_OP
#define LT_OP(name, ...) case Op::name: return LibraryOp::name;
std::optional<LibraryOp> as_library(Op op) {
  switch (op) {
#include "ir/ops/library.def"
    default: return std::nullopt;
  }
}
#undef LT_OP
#define LT_OP(name, ...) case Op::name: return NnOp::name;
std::optional<NnOp> as_nn(Op op) {
  switch (op) {
#include "ir/ops/nn.def"
    default: return std::nullopt;
  }
}
#undef LT_OP
#define LT_OP(name, ...) case Op::name: return CreationOp::name;
std::optional<CreationOp> as_creation(Op op) {
  switch (op) {
#include "ir/ops/creation.def"
    default: return std::nullopt;
  }
}
#undef LT_OP

}  // namespace lt::ir
