// Collective kernels: the operand is copied to the result (unless the buffer plan gave the
// result the operand's bytes), which the communicator then reduces in place across the ranks
// (runtime/comm/).
#include <cstring>

#include "ir/error.h"
#include "runtime/comm/communicator.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

int start_collective(ir::CollectiveOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  switch (op) {
    case ir::CollectiveOp::AllReduce: {
      const TensorRef &x = in[0], &o = out[0];
      const size_t bytes = o.type->bytes();
      if (bytes > 0 && o.data != x.data) std::memcpy(o.data, x.data, bytes);
      return comm::world().start_all_reduce(o.data, o.numel(), o.dtype(),
                                            std::get<ir::AllReduceAttrs>(attrs).reduce);
    }
  }
  LT_UNREACHABLE();
}

void finish_collective(int request) { comm::world().wait(request); }

// A blocking collective is one that is started and waited for at once: one code path for both.
void run_collective(ir::CollectiveOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  finish_collective(start_collective(op, attrs, in, out));
}

bool progress_collectives() {
  comm::Communicator& c = comm::world();
  if (c.in_flight() == 0) return false;
  c.progress();
  return true;
}

}  // namespace lt::rt
