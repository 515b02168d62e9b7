// Collective family: the result has the operand's type on every rank.
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/type_rules.h"

namespace lt::ir {

TypeList infer_collective(CollectiveOp op, std::span<const TensorType> in, const Attrs& a) {
  switch (op) {
    case CollectiveOp::AllReduce: {
      const TensorType& x = in[0];
      if (!is_compute_type(x.dtype) || x.dtype == DType::Bool)
        type_fail(fmt::format("needs an f32, f64, i32 or i64 operand, got {}", type_str(x)));
      const ReduceKind k = std::get<AllReduceAttrs>(a).reduce;
      if (k == ReduceKind::Mean && !is_float(x.dtype))
        type_fail(fmt::format("reduce=mean needs a float operand, got {}", type_str(x)));
      return {x};
    }
  }
  LT_UNREACHABLE();
}

}  // namespace lt::ir
