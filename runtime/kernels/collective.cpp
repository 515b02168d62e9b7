// Collective kernels. all_reduce: the operand is copied to the result (unless the buffer plan
// gave the result the operand's bytes), which the communicator then reduces in place across the
// ranks (runtime/comm/). reduce_scatter and all_gather read the operand into a result of
// another size.
#include <fmt/format.h>

#include <cstring>

#include "ir/error.h"
#include "runtime/comm/communicator.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {
namespace {

// The world a graph was traced for is the world it runs in: a graph compiled for another
// would exchange blocks of the wrong size.
void check_world(const char* op, int64_t world) {
  const int size = comm::world().size();
  if (world != size)
    throw Error(fmt::format("{}: the graph was traced for world={}, this job has {} ranks", op,
                            world, size));
}

}  // namespace

int start_collective(ir::CollectiveOp op, const ir::Attrs& attrs, Ins in, Outs out) {
  switch (op) {
    case ir::CollectiveOp::AllReduce: {
      const TensorRef &x = in[0], &o = out[0];
      const size_t bytes = o.type->bytes();
      if (bytes > 0 && o.data != x.data) std::memcpy(o.data, x.data, bytes);
      return comm::world().start_all_reduce(o.data, o.numel(), o.dtype(),
                                            std::get<ir::AllReduceAttrs>(attrs).reduce);
    }
    case ir::CollectiveOp::ReduceScatter: {
      const auto& a = std::get<ir::ReduceScatterAttrs>(attrs);
      check_world("reduce_scatter", a.world);
      return comm::world().start_reduce_scatter(in[0].data, out[0].data, out[0].numel(),
                                                out[0].dtype(), a.reduce);
    }
    case ir::CollectiveOp::AllGather: {
      check_world("all_gather", std::get<ir::AllGatherAttrs>(attrs).world);
      return comm::world().start_all_gather(in[0].data, out[0].data,
                                             static_cast<int64_t>(in[0].type->bytes()));
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
