// Elementwise family: broadcast shapes, equal dtypes (where: bool condition), bool comparisons.
#include <fmt/format.h>

#include "ir/type_rules.h"

namespace lt::ir {
namespace {

using enum ElementwiseOp;

bool float_only(ElementwiseOp op) {
  switch (op) {
    case Exp: case Log: case Sqrt: case Rsqrt: case Tanh: case Sigmoid: case Gelu: case Sin:
    case Cos: case Reciprocal: case Pow:
      return true;
    case Neg: case Abs: case Relu: case IsFinite: case Cast: case Add: case Sub: case Mul:
    case Div: case Maximum: case Minimum: case Eq: case Ne: case Lt: case Le: case Gt: case Ge:
    case Where:
      return false;
  }
  return false;
}

bool returns_bool(ElementwiseOp op) {
  switch (op) {
    case IsFinite: case Eq: case Ne: case Lt: case Le: case Gt: case Ge: return true;
    default: return false;
  }
}

Shape broadcast_all(std::span<const TensorType> in) {
  Shape s = in[0].shape;
  for (size_t i = 1; i < in.size(); ++i) {
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

std::vector<TensorType> infer_elementwise(ElementwiseOp op, std::span<const TensorType> in,
                                          const Attrs& attrs) {
  Shape shape = broadcast_all(in);
  if (op == Cast) {
    return {{std::get<CastAttrs>(attrs).to, std::move(shape)}};
  }
  DType dt = in[0].dtype;
  if (op == Where) {
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
  if (float_only(op) && !is_float(dt))
    type_fail(fmt::format("needs a float operand, got {}", type_str(in[0])));
  if (dt == DType::Bool && op != Where && op != Eq && op != Ne)
    type_fail(fmt::format("does not take bool operands, got {}", type_str(in[0])));
  return {{returns_bool(op) ? DType::Bool : dt, std::move(shape)}};
}

}  // namespace lt::ir
