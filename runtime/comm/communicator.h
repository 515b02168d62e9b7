// The replicas of a data-parallel job and the collectives between them. The runtime's collective
// kernels (all_reduce) and lt::dist call the process's one communicator, world(): a
// single-process one (world size 1) until lt::dist::init() installs the MPI one. Only
// runtime/comm/mpi_communicator.cpp includes mpi.h.
//
// Every call is collective: each rank makes the same calls, in the same order, with the same
// counts and dtypes; a mismatch is undefined (MPI's rule). That includes wait(): between two
// starts every rank waits for the same collectives (in any order), since a start with none in
// flight begins a new epoch of the shared-memory all-reduce (shm_all_reduce.h), which every rank
// must see at the same call. (A step's launch list, the same on every rank, keeps it.) Calls
// come from one thread at a time.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "ir/attrs.h"
#include "ir/dtype.h"
#include "runtime/comm/store_choice.h"

namespace lt::rt::comm {

/// The started all-reduces so far, by the path they took.
struct AllReduceCounts {
  int64_t shared_memory = 0;  ///< through the host's shared segment (shm_all_reduce.h)
  int64_t mpi = 0;            ///< through MPI's nonblocking collectives
  /// Of the shared-memory ones, those whose bytes this rank wrote with streaming stores
  /// (store_choice.h).
  int64_t streamed = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  /// "single" or "mpi".
  virtual std::string name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The rank among the ranks on this host, and their number.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;

  virtual void barrier() = 0;
  /// In place: data[i] becomes the reduction over the ranks of data[i] (Mean: the sum divided
  /// by size()). dtype f32, f64, i32 or i64 (Mean: float).
  virtual void all_reduce(void* data, int64_t count, DType dtype, ir::ReduceKind op) = 0;
  /// all_reduce() without waiting for it: `data` must stay allocated and untouched until
  /// wait(request) returns. Returns the request.
  virtual int start_all_reduce(void* data, int64_t count, DType dtype, ir::ReduceKind op) = 0;
  /// Starts a reduce-scatter: `in` holds size() blocks of `count` elements, and `out` (count
  /// elements, not overlapping `in`) gets the reduction over the ranks of block rank(). `in`
  /// is read before this returns; `out` stays allocated and untouched until wait(request).
  /// Returns the request.
  virtual int start_reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                                   ir::ReduceKind op) = 0;
  /// Starts an all-gather: `out` (not overlapping `in`) gets size() blocks of `bytes` bytes,
  /// block r rank r's `in`; `in` is read before this returns. Returns the request.
  virtual int start_all_gather(const void* in, void* out, int64_t bytes) = 0;
  /// Lets started collectives advance. MPI moves a nonblocking collective on only inside MPI
  /// calls, so a step calls this between its launches while any is in flight.
  virtual void progress() = 0;
  /// Returns once the collective `request` has finished; `data` then holds its result.
  virtual void wait(int request) = 0;
  /// Started collectives not yet waited for.
  virtual int in_flight() const = 0;
  virtual AllReduceCounts all_reduce_counts() const { return {}; }
  /// `bytes` bytes of root's `data` are copied into every rank's `data`.
  virtual void broadcast(void* data, int64_t bytes, int root) = 0;
  /// out holds size() blocks of `bytes` bytes: block r is rank r's `in`.
  virtual void all_gather(const void* in, void* out, int64_t bytes) = 0;
  /// all_gather() on the job's control channel, a communicator of its own (so it never matches
  /// a collective that other ranks run meanwhile in a step), waiting at most `timeout_s`
  /// seconds: false when some rank did not join in time (the ranks then disagree on what they
  /// run; the caller reports it and the job ends).
  virtual bool control_all_gather(const void* in, void* out, int64_t bytes,
                                  double timeout_s) = 0;
  /// broadcast() of `bytes` bytes of root's `data` on the control channel, waiting at most
  /// `timeout_s` seconds: false when some rank did not join in time.
  virtual bool control_broadcast(void* data, int64_t bytes, int root, double timeout_s) = 0;
  /// Ends every rank of the job at once with exit status `code` (a failing rank must not leave
  /// the others waiting in a collective). Does not return.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// The process's communicator: the single-process one unless set_world() installed another.
Communicator& world();
/// Installs the process's communicator (lt::dist::init). Not thread safe: call before any
/// collective runs.
void set_world(std::unique_ptr<Communicator> c);

/// A job of one process: collectives are the identity.
std::unique_ptr<Communicator> make_single();
/// Joins the MPI job this process was started in (MPI_Init_thread). At exit, a non-zero status
/// ends every rank of the job at once (MPI_Abort); status 0 finalizes MPI once every rank has
/// exited (a rank whose peers have not exited within 120 s ends the job). Throws lt::Error when
/// MPI cannot start. `shm_all_reduce`: when every rank asks for it and all run on one host, the
/// started all-reduces go through a shared-memory segment (shm_all_reduce.h) instead of MPI's
/// messages, from the second epoch on (the first one sizes the segment); `stores` says how a rank
/// writes the large ones into the segment (store_choice.h).
std::unique_ptr<Communicator> make_mpi(bool shm_all_reduce,
                                       StorePolicy stores = StorePolicy::Auto);

}  // namespace lt::rt::comm
