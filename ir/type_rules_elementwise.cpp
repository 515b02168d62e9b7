// Elementwise family: broadcast shapes, equal dtypes (where: bool condition), bool comparisons.
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/type_rules.h"

namespace lt::ir {
namespace {

Shape broadcast_all(std::span<const TensorType> in) {
  Shape s = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].shape == s) continue;  // most operands match: no broadcast to work out
    Shape next;
    if (!broadcast_shapes(s, in[i].shape, &next)) {
      std::string types;
      for (size_t j = 0; j < in.size(); ++j) types += (j ? " with " : "") + type_str(in[j]);
      type_fail(fmt::format("cannot broadcast {}", types));
    }
    s = std::move(next);
  }
  return s;
}

}  // namespace

// The row's operands and result columns (ir/ops/elementwise.def) decide the dtypes.
TypeList infer_elementwise(ElementwiseOp op, std::span<const TensorType> in, const Attrs& attrs) {
  const OpInfo& row = info(to_op(op));
  Shape shape = broadcast_all(in);
  if (row.result == ResultKind::Attr) {  // cast: from any dtype (Stored) to the attribute's
    return one_type(std::get<CastAttrs>(attrs).to, std::move(shape));
  }
  DType dt = in[0].dtype;
  if (row.operands == OperandKind::Select) {
    if (in[0].dtype != DType::Bool)
      type_fail(fmt::format("condition must be bool, got {}", type_str(in[0])));
    if (in[1].dtype != in[2].dtype)
      type_fail(fmt::format("branch dtypes differ: {} vs {}", type_str(in[1]), type_str(in[2])));
    dt = in[1].dtype;
  } else {
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i].dtype != dt)
        type_fail(fmt::format("dtypes differ: {} vs {}", type_str(in[0]), type_str(in[i])));
  }
  if (!is_compute_type(dt))
    type_fail(fmt::format("{} is a storage type here; cast it to f32 first", dtype_name(dt)));
  switch (row.operands) {
    case OperandKind::Float:
      if (!is_float(dt)) type_fail(fmt::format("needs a float operand, got {}", type_str(in[0])));
      break;
    case OperandKind::Numeric:
      if (dt == DType::Bool)
        type_fail(fmt::format("does not take bool operands, got {}", type_str(in[0])));
      break;
    case OperandKind::Integral:
      if (is_float(dt))
        type_fail(fmt::format("takes integer or bool operands, got {}", type_str(in[0])));
      break;
    case OperandKind::AnyType: case OperandKind::Select: case OperandKind::Stored: break;
    case OperandKind::Mixed: case OperandKind::Nothing: case OperandKind::FloatWidensFirst:
    case OperandKind::Gemm:
      LT_UNREACHABLE();  // no such row
  }
  return one_type(row.result == ResultKind::Bool ? DType::Bool : dt, std::move(shape));
}

}  // namespace lt::ir
