// The op enum and its info table, generated from the per-family tables in ir/ops/*.def. A
// per-family enum makes each switch over a family exhaustive (no default:, -Werror=switch).
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
#undef LT_OP

enum class OpFamily : uint8_t { Elementwise, Reduce, View, Library, Nn, Creation };

inline constexpr int kVariadic = -1;

struct OpInfo {
  std::string_view name;      // enumerator name, "MatMul"
  std::string_view mnemonic;  // IR text name, "matmul"
  int arity;                  // number of inputs, or kVariadic
  OpFamily family;
  bool differentiable;
  size_t attrs_index;  // which Attrs alternative the op carries
};

const OpInfo& info(Op op);
inline std::string_view mnemonic(Op op) { return info(op).mnemonic; }
std::optional<Op> op_from_mnemonic(std::string_view m);
/// Every op, in table order.
std::span<const Op> all_ops();

std::optional<ElementwiseOp> as_elementwise(Op op);
std::optional<ReduceOp> as_reduce(Op op);
std::optional<ViewOp> as_view(Op op);
std::optional<LibraryOp> as_library(Op op);
std::optional<NnOp> as_nn(Op op);
std::optional<CreationOp> as_creation(Op op);

}  // namespace lt::ir
