// Gradients of the collective family. all_reduce with sum or mean is linear across the ranks:
// the gradient of rank r's operand is the same reduction of every rank's output gradient (the
// transpose of "every rank gets the sum" is "every rank sends its gradient to every sum").
// max and min have no gradient here (PyTorch's collectives have none either).
#include <fmt/format.h>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "ir/error.h"

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
  }
  LT_UNREACHABLE();
}

}  // namespace lt
