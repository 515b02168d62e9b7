#include "ir/error.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

void run_kernel(ir::Op op, const ir::Attrs& attrs, Ins in, Outs out) {
  using ir::OpFamily;
  switch (ir::info(op).family) {
    case OpFamily::Elementwise: return run_elementwise(*ir::as_elementwise(op), attrs, in, out);
    case OpFamily::Reduce:
      return run_reduce(*ir::as_reduce(op), std::get<ir::ReduceAttrs>(attrs), in, out);
    case OpFamily::View: return run_view(*ir::as_view(op), attrs, in, out);
    case OpFamily::Library: return run_library(*ir::as_library(op), attrs, in, out);
    case OpFamily::Nn: return run_nn(*ir::as_nn(op), attrs, in, out);
    case OpFamily::Creation: return run_creation(*ir::as_creation(op), attrs, in, out);
    case OpFamily::Collective: return run_collective(*ir::as_collective(op), attrs, in, out);
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
