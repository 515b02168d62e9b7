// Gradients of the collective family. all_reduce with sum or mean is linear across the ranks:
// the gradient of rank r's operand is the same reduction of every rank's output gradient (the
// transpose of "every rank gets the sum" is "every rank sends its gradient to every sum").
// max and min have no gradient here (PyTorch's collectives have none either). reduce_scatter
// and all_gather are each other's transposes: rank r's block of every rank's sum is rank r's
// output, so an operand's gradient is the gathered output gradients (scaled by 1/world for a
// mean), and a gathered block's gradient is the sum over the ranks of that block's gradient.
#include <fmt/format.h>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "ir/error.h"
#include "lt/ops.h"

namespace lt {

std::vector<Tensor> vjp_collective(ir::CollectiveOp op, const VjpArgs& a) {
  switch (op) {
    case ir::CollectiveOp::AllReduce: {
      const auto& attrs = std::get<ir::AllReduceAttrs>(a.attrs);
      if (attrs.reduce == ir::ReduceKind::Max || attrs.reduce == ir::ReduceKind::Min)
        throw Error(fmt::format("all_reduce: reduce={} has no gradient",
                                ir::reduce_kind_name(attrs.reduce)));
      return {apply1(ir::Op::AllReduce, std::span(&a.gout[0], 1), attrs, Loc::current())};
    }
    case ir::CollectiveOp::ReduceScatter: {
      const auto& attrs = std::get<ir::ReduceScatterAttrs>(a.attrs);
      if (attrs.reduce == ir::ReduceKind::Max || attrs.reduce == ir::ReduceKind::Min)
        throw Error(fmt::format("reduce_scatter: reduce={} has no gradient",
                                ir::reduce_kind_name(attrs.reduce)));
      Tensor g = apply1(ir::Op::AllGather, std::span(&a.gout[0], 1),
                        ir::AllGatherAttrs{attrs.world}, Loc::current());
      if (attrs.reduce == ir::ReduceKind::Mean) g = g * (1.0 / static_cast<double>(attrs.world));
      return {g};
    }
    case ir::CollectiveOp::AllGather: {
      const int64_t world = std::get<ir::AllGatherAttrs>(a.attrs).world;
      return {apply1(ir::Op::ReduceScatter, std::span(&a.gout[0], 1),
                     ir::ReduceScatterAttrs{ir::ReduceKind::Sum, world}, Loc::current())};
    }
  }
  LT_UNREACHABLE();
}

}  // namespace lt
