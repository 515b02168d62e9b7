// lazytrain.distributed's core: the job (lt/dist.h), its collectives, the eager gradient
// reducer DistributedDataParallel drives, and SyncBatchNorm's normalization.
#include <string>
#include <vector>

#include "lt/nn/sync_batch_norm.h"
#include "python/src/bind.h"

namespace lt::py {
namespace {

dist::ReduceOp reduce_op(const std::string& name) {
  if (name == "sum") return dist::ReduceOp::Sum;
  if (name == "mean") return dist::ReduceOp::Mean;
  if (name == "max") return dist::ReduceOp::Max;
  if (name == "min") return dist::ReduceOp::Min;
  throw pb::value_error("unknown reduce op " + name);
}

}  // namespace

void bind_dist(pb::module_& m) {
  const Loc& at = call_site();
  pb::module_ d = m.def_submodule("dist");
  d.def("init", []() {
    pb::gil_scoped_release release;
    dist::init();
  });
  d.def("is_initialized", &dist::is_initialized);
  d.def("backend", &dist::backend);
  d.def("rank", &dist::rank);
  d.def("world_size", &dist::world_size);
  d.def("local_rank", &dist::local_rank);
  d.def("local_world_size", &dist::local_world_size);
  d.def("barrier", []() {
    pb::gil_scoped_release release;  // the other ranks may be in Python still
    dist::barrier();
  });
  d.def("all_reduce", [at](const Tensor& t, const std::string& op) {
    pb::gil_scoped_release release;
    return dist::all_reduce(t, reduce_op(op), at);
  });
  d.def("reduce_scatter_tensor", [at](const Tensor& t, const std::string& op) {
    pb::gil_scoped_release release;
    return dist::reduce_scatter_tensor(t, reduce_op(op), at);
  });
  d.def("all_gather_tensor", [at](const Tensor& t) {
    pb::gil_scoped_release release;
    return dist::all_gather_tensor(t, at);
  });
  d.def("reduce_value", [at](const Tensor& t, bool average) {
    CallerNamed named;
    pb::gil_scoped_release release;
    return dist::reduce_value(t, average, at);
  });
  d.def("all_gather", [at](const Tensor& t) {
    CallerNamed named;
    pb::gil_scoped_release release;
    return dist::all_gather(t, at);
  });
  d.def("broadcast", [at](std::vector<Tensor> ts, int root) {
    CallerNamed named;
    pb::gil_scoped_release release;
    dist::broadcast(std::span<Tensor>(ts), root, at);
  });
  d.def("all_reduce_gradients", [at](const std::vector<Tensor>& params) {
    pb::gil_scoped_release release;
    dist::all_reduce_gradients(params, at);
  });
  d.def("abort", [](int code) { dist::abort(code); });
  pb::class_<dist::GradientReducer>(d, "GradientReducer")
      .def(pb::init([at](std::vector<Tensor> params) {
        return std::make_unique<dist::GradientReducer>(std::move(params), at);
      }))
      .def("set_sync", &dist::GradientReducer::set_sync)
      .def("finish", [at](dist::GradientReducer& r) {
        pb::gil_scoped_release release;
        r.finish(at);
      })
      .def("buckets", &dist::GradientReducer::buckets);
  d.def("sync_batch_norm", [at](const Tensor& x, std::optional<Tensor> weight,
                                std::optional<Tensor> bias, std::optional<Tensor> running_mean,
                                std::optional<Tensor> running_var, double momentum, double eps) {
    pb::gil_scoped_release release;
    return nn::sync_batch_norm(x, weight.value_or(Tensor()), bias.value_or(Tensor()),
                               running_mean.value_or(Tensor()), running_var.value_or(Tensor()),
                               momentum, eps, at);
  });
}

}  // namespace lt::py
