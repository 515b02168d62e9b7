// Data parallelism over replicas (ranks) of one program, as torch.distributed: every rank runs
// the same training step on its share of the batch, and the gradients are all-reduced before
// the optimizer applies them. The job is started by mpirun (or lt-launch, which runs mpirun);
// started any other way the program is a job of one rank and every collective is the identity,
// so a program written for replicas runs unchanged as one process. docs/DISTRIBUTED.md.
//
// Collectives are collective: every rank makes the same calls in the same order with tensors
// of the same types.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt::nn {
class Module;
}

namespace lt::dist {

enum class ReduceOp { Sum, Mean, Max, Min };

/// Joins the job: the MPI communicator when mpirun (OpenMPI's variables OMPI_COMM_WORLD_SIZE
/// and OMPI_COMM_WORLD_RANK) started the process, the single-process one otherwise.
/// Idempotent. Throws lt::Error when MPI fails to start.
void init();
bool is_initialized();
/// "mpi" or "single".
std::string backend();
/// The asynchronous all-reduces this rank started so far (a step graph's, or the eager
/// GradientReducer's buckets), by the path they took: through a shared-memory segment of the
/// ranks' host (LT_SHM_ALL_REDUCE, when every rank runs on one host) or through MPI.
struct AllReduceCounts {
  int64_t shared_memory = 0;
  int64_t mpi = 0;
  /// Of the shared-memory ones, those whose bytes this rank wrote into the segment with
  /// streaming stores, which bypass the caches (LT_SHM_STORES; docs/DISTRIBUTED.md).
  int64_t streamed = 0;
};
AllReduceCounts all_reduce_counts();
/// This process's rank in [0, world_size()), and the number of ranks (1 before init()).
int rank();
int world_size();
/// The rank among the ranks on this host, and their number.
int local_rank();
int local_world_size();

/// Waits until every rank has called it.
void barrier();

/// Every rank gets the elementwise reduction of all ranks' `t` (mean: the sum / world_size()).
/// An op like any other: in lazy mode it is an `all_reduce` node of the step graph, run when
/// the step runs; sum and mean have a gradient (the same reduction of the output gradients).
/// f32, f64, i32 or i64; mean needs a float tensor.
Tensor all_reduce(const Tensor& t, ReduceOp op = ReduceOp::Sum, Loc loc = Loc::current());

/// torch.distributed.reduce_scatter_tensor as an op (in lazy mode a `reduce_scatter` node of the
/// step graph, its result the output tensor): t's dim 0 is world_size() equal blocks, and rank r
/// gets the reduction over the ranks of block r, of shape [t.size(0) / world_size(), ...].
/// Sum and mean have a gradient (all_gather_tensor of the output gradient). The graph is traced
/// for this world size: run in another, it is an lt::Error.
Tensor reduce_scatter_tensor(const Tensor& t, ReduceOp op = ReduceOp::Sum,
                             Loc loc = Loc::current());
/// torch.distributed.all_gather_into_tensor as an op (a graph node, like
/// reduce_scatter_tensor): [world_size() * t.size(0), ...], rank r's t at block r of dim 0. Its
/// gradient is reduce_scatter_tensor (sum) of the output gradient.
Tensor all_gather_tensor(const Tensor& t, Loc loc = Loc::current());

/// [world_size(), ...t.shape()]: row r is rank r's `t`. A value read (it syncs a lazy tensor);
/// the result is device data.
Tensor all_gather(const Tensor& t, Loc loc = Loc::current());

/// A metric reduced across ranks for printing: the mean (average) or the sum of every rank's
/// `t` (losses are averaged, correct-prediction counts summed). A value read, like all_gather.
Tensor reduce_value(const Tensor& t, bool average = true, Loc loc = Loc::current());

/// Copies root's values of the tensors into every rank's (in place; a value read of them all,
/// the pending ones run as one graph).
void broadcast(std::span<Tensor> tensors, int root = 0, Loc loc = Loc::current());
/// broadcast() of every parameter and buffer of `module`, so that replicas start from the same
/// weights however each initialized them.
void broadcast_parameters(nn::Module& module, int root = 0, Loc loc = Loc::current());

/// Replaces each defined gradient by its mean over the ranks: one all_reduce (mean) per
/// gradient, traced into the step graph in lazy mode. Call it after backward() and before the
/// optimizer's step(). Parameters without a gradient are skipped (the same ones on every rank).
void all_reduce_gradients(std::span<const Tensor> params, Loc loc = Loc::current());
void all_reduce_gradients(const nn::Module& module, Loc loc = Loc::current());

/// Eager replicas as PyTorch's DistributedDataParallel: during backward(), gradients are packed
/// into buckets (LT_BUCKET_FIRST_KB for the first, LT_BUCKET_KB after; parameters in reverse
/// order, about the order the backward pass completes them) and each bucket is all-reduced
/// (mean) asynchronously as soon as its last gradient is complete, in bucket order, while the
/// backward pass goes on; finish() waits for them and replaces each gradient by its mean. In
/// lazy mode backward() only traces, so finish() is all_reduce_gradients(): the step graph's
/// buckets (the bucket_all_reduce pass) overlap the same way.
///
/// The parameters must be f32. Every rank makes one reducer over the same parameters and calls
/// finish() after each backward() that it syncs. With gradient accumulation, set_sync(false)
/// before the micro-batches whose gradients only accumulate (PyTorch's no_sync()).
class GradientReducer {
 public:
  explicit GradientReducer(std::vector<Tensor> params, Loc loc = Loc::current());
  explicit GradientReducer(const nn::Module& module, Loc loc = Loc::current());
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  /// Whether the next backward() passes start all-reducing (default true).
  void set_sync(bool on);
  /// Starts the buckets the backward pass did not (parameters without a gradient are zeros in
  /// them and keep no gradient), waits for every bucket, and sets each defined gradient to its
  /// mean over the ranks.
  void finish(Loc loc = Loc::current());
  /// The buckets: parameter indices, in the order they are all-reduced.
  std::vector<std::vector<int>> buckets() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::vector<int> hook_ids_;
};

/// Ends every rank of the job with exit status `code` at once (MPI_Abort), so that a rank that
/// fails does not leave the others waiting in a collective. In a job of one rank: exit(code)
/// without running destructors.
[[noreturn]] void abort(int code);

}  // namespace lt::dist
