#include "lt/dist.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "frontend/dispatch.h"
#include "frontend/lazy/tracer.h"
#include "frontend/options/store.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/autograd.h"
#include "lt/nn.h"
#include "lt/options.h"
#include "runtime/comm/communicator.h"

namespace lt::dist {
namespace {

bool g_initialized = false;

ir::ReduceKind kind(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return ir::ReduceKind::Sum;
    case ReduceOp::Mean: return ir::ReduceKind::Mean;
    case ReduceOp::Max: return ir::ReduceKind::Max;
    case ReduceOp::Min: return ir::ReduceKind::Min;
  }
  return ir::ReduceKind::Sum;
}

rt::comm::Communicator& comm() { return rt::comm::world(); }

// t's data in a buffer of its own, for collectives that write in place (buffers are never
// written in place); a value read in lazy mode.
std::shared_ptr<TensorImpl> host_copy(const Tensor& t, const char* what, const Loc& loc) {
  lazy::sync(t, what, loc);
  auto impl = make_impl(t.type());
  const size_t bytes = t.type().bytes();
  if (bytes > 0) std::memcpy(impl->data(), t.impl()->data(), bytes);
  return impl;
}

}  // namespace

void init() {
  if (g_initialized) return;
  lt::init();
  constexpr rt::comm::StorePolicy kStores[] = {rt::comm::StorePolicy::Auto,
                                                rt::comm::StorePolicy::Cached,
                                                rt::comm::StorePolicy::Streaming};  // LT_SHM_STORES
  rt::comm::set_world(
      options::started_by_mpirun()
          ? rt::comm::make_mpi(options::enabled(options::Setting::ShmAllReduce),
                               kStores[options::number(options::Setting::ShmStores)])
          : rt::comm::make_single());
  g_initialized = true;
}

bool is_initialized() { return g_initialized; }
std::string backend() { return comm().name(); }

AllReduceCounts all_reduce_counts() {
  const rt::comm::AllReduceCounts c = comm().all_reduce_counts();
  return {c.shared_memory, c.mpi, c.streamed};
}
int rank() { return comm().rank(); }
int world_size() { return comm().size(); }
int local_rank() { return comm().local_rank(); }
int local_world_size() { return comm().local_size(); }
void barrier() { comm().barrier(); }

Tensor all_reduce(const Tensor& t, ReduceOp op, Loc loc) {
  return apply1(ir::Op::AllReduce, std::span(&t, 1), ir::AllReduceAttrs{kind(op)}, loc);
}

Tensor reduce_scatter_tensor(const Tensor& t, ReduceOp op, Loc loc) {
  if (!t.defined()) fail_op("reduce_scatter_tensor", "operand is an undefined tensor", {}, loc);
  const int64_t world = world_size();
  if (t.rank() == 0 || t.shape()[0] % world != 0)
    fail_op("reduce_scatter_tensor",
            fmt::format("dim 0 must be a multiple of the world size {}", world), std::span(&t, 1),
            loc);
  Shape shape = t.shape();
  shape[0] /= world;
  const Tensor flat = reshape(t, {t.numel()}, loc);
  const Tensor out = apply1(ir::Op::ReduceScatter, std::span(&flat, 1),
                            ir::ReduceScatterAttrs{kind(op), world}, loc);
  return reshape(out, shape, loc);
}

Tensor all_gather_tensor(const Tensor& t, Loc loc) {
  if (!t.defined()) fail_op("all_gather_tensor", "operand is an undefined tensor", {}, loc);
  if (t.rank() == 0)
    fail_op("all_gather_tensor", "needs a tensor of at least one dim", std::span(&t, 1), loc);
  const int64_t world = world_size();
  Shape shape = t.shape();
  shape[0] *= world;
  const Tensor flat = reshape(t, {t.numel()}, loc);
  const Tensor out =
      apply1(ir::Op::AllGather, std::span(&flat, 1), ir::AllGatherAttrs{world}, loc);
  return reshape(out, shape, loc);
}

Tensor all_gather(const Tensor& t, Loc loc) {
  if (!t.defined()) fail_op("all_gather", "operand is an undefined tensor", {}, loc);
  lazy::sync(t, "all_gather", loc);  // the communicator reads t's data where it is
  Shape shape = t.shape();
  shape.insert(shape.begin(), world_size());
  auto out = make_impl({t.dtype(), shape});
  comm().all_gather(t.impl()->data(), out->data(), static_cast<int64_t>(t.type().bytes()));
  return Tensor(out);
}

Tensor reduce_value(const Tensor& t, bool average, Loc loc) {
  if (!t.defined()) fail_op("reduce_value", "operand is an undefined tensor", {}, loc);
  const bool is_float_value = t.dtype() == DType::F32 || t.dtype() == DType::F64;
  if (average && !is_float_value)
    fail_op("reduce_value", "averaging needs an f32 or f64 tensor", std::span(&t, 1), loc);
  if (!is_float_value && t.dtype() != DType::I32 && t.dtype() != DType::I64)
    fail_op("reduce_value", "needs an f32, f64, i32 or i64 tensor", std::span(&t, 1), loc);
  const std::shared_ptr<TensorImpl> v = host_copy(snapshot(t), "reduce_value", loc);
  comm().all_reduce(v->data(), t.numel(), t.dtype(),
                    average ? ir::ReduceKind::Mean : ir::ReduceKind::Sum);
  return Tensor(v);
}

void broadcast(std::span<Tensor> tensors, int root, Loc loc) {
  if (root < 0 || root >= world_size())
    throw InputError(fmt::format("broadcast: root {} is not a rank of this job of {} at {}", root,
                                 world_size(), location_str(loc)));
  NoGradGuard no_grad;
  lazy::sync(std::span<const Tensor>(tensors), "broadcast", loc);  // every pending one, one graph
  for (Tensor& t : tensors) {
    if (!t.defined()) continue;
    const std::shared_ptr<TensorImpl> v = host_copy(t, "broadcast", loc);
    comm().broadcast(v->data(), static_cast<int64_t>(t.type().bytes()), root);
    t.copy_(Tensor(v), loc);
  }
}

void broadcast_parameters(nn::Module& module, int root, Loc loc) {
  std::vector<Tensor> tensors = module.parameters();
  for (const Tensor& b : module.buffers()) tensors.push_back(b);
  broadcast(tensors, root, loc);
}

void all_reduce_gradients(std::span<const Tensor> params, Loc loc) {
  NoGradGuard no_grad;
  for (const Tensor& p : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    Tensor handle = p;
    handle.set_grad(all_reduce(g, ReduceOp::Mean, loc));
  }
}

void all_reduce_gradients(const nn::Module& module, Loc loc) {
  all_reduce_gradients(module.parameters(), loc);
}

void abort(int code) {
  comm().abort(code);
  std::_Exit(code);  // not reached: Communicator::abort does not return
}

}  // namespace lt::dist
