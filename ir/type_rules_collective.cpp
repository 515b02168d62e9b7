// Collective family: the result has the operand's type on every rank.
#include <fmt/format.h>

#include "ir/error.h"
#include "ir/type_rules.h"

namespace lt::ir {
namespace {

void check_world_operand(const TensorType& x, int64_t world) {
  if (!is_compute_type(x.dtype) || x.dtype == DType::Bool)
    type_fail(fmt::format("needs an f32, f64, i32 or i64 operand, got {}", type_str(x)));
  if (x.rank() != 1) type_fail(fmt::format("needs a 1-d operand, got {}", type_str(x)));
  if (world < 1) type_fail(fmt::format("world must be at least 1, got {}", world));
}

}  // namespace

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
    case CollectiveOp::ReduceScatter: {
      const TensorType& x = in[0];
      const auto& at = std::get<ReduceScatterAttrs>(a);
      check_world_operand(x, at.world);
      if (at.reduce == ReduceKind::Mean && !is_float(x.dtype))
        type_fail(fmt::format("reduce=mean needs a float operand, got {}", type_str(x)));
      if (x.shape[0] % at.world != 0)
        type_fail(fmt::format("the operand's length {} is not a multiple of world={}",
                              x.shape[0], at.world));
      return {TensorType{x.dtype, Shape{x.shape[0] / at.world}}};
    }
    case CollectiveOp::AllGather: {
      const TensorType& x = in[0];
      const int64_t world = std::get<AllGatherAttrs>(a).world;
      check_world_operand(x, world);
      if (x.shape[0] > kMaxElements / world)
        type_fail(fmt::format("{} gathered from world={} ranks is too large", type_str(x), world));
      return {TensorType{x.dtype, Shape{x.shape[0] * world}}};
    }
  }
  LT_UNREACHABLE();
}

}  // namespace lt::ir
