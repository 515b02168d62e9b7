// The communicator of a job started by mpirun (OpenMPI), on MPI_COMM_WORLD.
#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <vector>

#include <unistd.h>

#include "ir/error.h"
#include "runtime/comm/communicator.h"
#include "runtime/comm/shm_all_reduce.h"
#include "runtime/comm/shm_segment.h"

namespace lt::rt::comm {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(fmt::format("{}: {}", what, std::string_view(text, static_cast<size_t>(len))));
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::F32: return MPI_FLOAT;
    case DType::F64: return MPI_DOUBLE;
    case DType::I32: return MPI_INT32_T;
    case DType::I64: return MPI_INT64_T;
    case DType::Bool: case DType::F16: case DType::BF16: break;
  }
  throw Error(fmt::format("collectives take f32, f64, i32 or i64 data, not {}", dtype_name(t)));
}

void check_mean(DType t, ir::ReduceKind k) {
  if (k == ir::ReduceKind::Mean && t != DType::F32 && t != DType::F64)
    throw Error(fmt::format("a mean all-reduce takes f32 or f64 data, not {}", dtype_name(t)));
}

MPI_Op mpi_op(ir::ReduceKind k) {
  switch (k) {
    case ir::ReduceKind::Sum: case ir::ReduceKind::Mean: return MPI_SUM;
    case ir::ReduceKind::Max: return MPI_MAX;
    case ir::ReduceKind::Min: return MPI_MIN;
  }
  LT_UNREACHABLE();
}

// MPI counts are int: a larger message goes in pieces of at most this many elements.
constexpr int64_t kMaxCount = INT_MAX / 2;

// How long a rank that exits with status 0 waits for the others to exit too before it ends the
// job: a rank that finishes early (a bug: the others still run collectives that need it) must
// not leave them waiting forever, and MPI_Finalize would wait with them.
constexpr double kExitGraceSeconds = 120;

// The most bytes of operands a rank's part of the shared segment holds: collectives beyond it
// in one epoch go through MPI.
constexpr int64_t kMaxShmCapacity = int64_t{256} << 20;
// The segment grows to the last epoch's demand rounded up to this.
constexpr int64_t kShmGrain = int64_t{1} << 20;

// A communicator of its own for the exit barrier, so that it never matches a collective the
// other ranks are still in on MPI_COMM_WORLD.
MPI_Comm g_exit_comm = MPI_COMM_NULL;

// Waits for `request` at most `timeout_s` seconds; false when it did not complete.
bool wait_for(MPI_Request& request, double timeout_s) {
  const double start = MPI_Wtime();
  for (int flag = 0;;) {
    MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
    if (flag) return true;
    if (MPI_Wtime() - start > timeout_s) return false;
    usleep(100);
  }
}

// Runs at exit() (returning from main included) with its status (glibc's on_exit). A non-zero
// status ends every rank now, as a crash does: the others may be waiting in a collective for
// this rank, and MPI_Finalize would wait for them.
void finish_at_exit(int status, void*) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  std::fflush(nullptr);
  if (status != 0) MPI_Abort(MPI_COMM_WORLD, status);
  MPI_Request done;
  MPI_Ibarrier(g_exit_comm, &done);
  if (!wait_for(done, kExitGraceSeconds)) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "lazytrain: rank %d exited while other ranks still run: ending the job\n",
                 rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm_free(&g_exit_comm);
  MPI_Finalize();
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(bool shm_all_reduce, StorePolicy stores) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // The step runs its collectives from whichever thread calls mark_step, one at a time.
      check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
      on_exit(finish_at_exit, nullptr);
      if (provided < MPI_THREAD_SERIALIZED)
        throw Error(fmt::format("this MPI gives thread level {}; lazytrain needs "
                                "MPI_THREAD_SERIALIZED ({})", provided, MPI_THREAD_SERIALIZED));
    }
    // A failing call ends the whole job (MPI's default on MPI_COMM_WORLD, set here in case the
    // program changed it): a rank never waits forever for a dead peer.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (g_exit_comm == MPI_COMM_NULL)
      check(MPI_Comm_dup(MPI_COMM_WORLD, &g_exit_comm), "MPI_Comm_dup");
    check(MPI_Comm_dup(MPI_COMM_WORLD, &control_), "MPI_Comm_dup");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    MPI_Comm_rank(local, &local_rank_);
    MPI_Comm_size(local, &local_size_);
    MPI_Comm_free(&local);
    // Every rank must take the same path for each collective: the shared segment only when
    // every rank asks for it and all of them run on this host.
    int mine = shm_all_reduce && local_size_ == size_ && size_ > 1, all = 0;
    check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    if (all) shm_.emplace(rank_, size_, stores);
  }

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }

  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  void all_reduce(void* data, int64_t count, DType dtype, ir::ReduceKind op) override {
    const MPI_Datatype t = mpi_type(dtype);
    check_mean(dtype, op);
    const auto esize = static_cast<int64_t>(dtype_size(dtype));
    for (int64_t done = 0; done < count; done += kMaxCount) {
      const auto n = static_cast<int>(std::min(kMaxCount, count - done));
      check(MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * esize, n, t, mpi_op(op),
                          MPI_COMM_WORLD),
            "MPI_Allreduce");
    }
    if (op == ir::ReduceKind::Mean) scale(data, count, dtype, 1.0 / size_);
  }

  int start_all_reduce(void* data, int64_t count, DType dtype, ir::ReduceKind op) override {
    const MPI_Datatype t = mpi_type(dtype);
    check_mean(dtype, op);
    const auto esize = static_cast<int64_t>(dtype_size(dtype));
    Started& s = new_started(data, count, dtype, op == ir::ReduceKind::Mean);
    const int r = static_cast<int>(&s - started_.data());
    if (shm_) {
      const bool first = in_flight_ == 0;
      if (first) grow_shm();
      s.shm = shm_->start(data, count, dtype, op, first);
      if (s.shm >= 0) {
        ++in_flight_;
        ++counts_.shared_memory;
        return r;
      }
    }
    ++counts_.mpi;
    for (int64_t done = 0; done < count; done += kMaxCount) {
      const auto n = static_cast<int>(std::min(kMaxCount, count - done));
      s.requests.emplace_back();
      check(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(data) + done * esize, n, t,
                           mpi_op(op), MPI_COMM_WORLD, &s.requests.back()),
            "MPI_Iallreduce");
    }
    ++in_flight_;
    return r;
  }

  int start_reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                           ir::ReduceKind op) override {
    const MPI_Datatype t = mpi_type(dtype);
    check_mean(dtype, op);
    if (shm_) {
      if (const int r = start_shm([&](bool first) {
            return shm_->start_reduce_scatter(in, out, count, dtype, op, first);
          });
          r >= 0)
        return r;
    }
    LT_CHECK(count <= kMaxCount, "reduce_scatter of {} elements per rank: at most {}", count,
             kMaxCount);
    Started& s = new_started(out, count, dtype, op == ir::ReduceKind::Mean);
    s.staged.assign(static_cast<const std::byte*>(in),
                    static_cast<const std::byte*>(in) + count * size_ * dtype_size(dtype));
    s.requests.emplace_back();
    check(MPI_Ireduce_scatter_block(s.staged.data(), out, static_cast<int>(count), t, mpi_op(op),
                                    MPI_COMM_WORLD, &s.requests.back()),
          "MPI_Ireduce_scatter_block");
    ++in_flight_;
    return static_cast<int>(&s - started_.data());
  }
  int start_all_gather(const void* in, void* out, int64_t bytes) override {
    if (shm_) {
      if (const int r = start_shm([&](bool first) {
            return shm_->start_all_gather(in, out, bytes, first);
          });
          r >= 0)
        return r;
    }
    LT_CHECK(bytes <= kMaxCount, "all_gather of {} bytes per rank: at most {}", bytes, kMaxCount);
    Started& s = new_started(out, 0, DType::F32, false);
    s.staged.assign(static_cast<const std::byte*>(in), static_cast<const std::byte*>(in) + bytes);
    s.requests.emplace_back();
    check(MPI_Iallgather(s.staged.data(), static_cast<int>(bytes), MPI_BYTE, out,
                         static_cast<int>(bytes), MPI_BYTE, MPI_COMM_WORLD, &s.requests.back()),
          "MPI_Iallgather");
    ++in_flight_;
    return static_cast<int>(&s - started_.data());
  }
  void progress() override {
    if (shm_) shm_->progress();
    progress_mpi();
  }

  void progress_mpi() {
    for (Started& s : started_) {
      if (!s.active || s.requests.empty()) continue;
      int flag = 0;
      check(MPI_Testall(static_cast<int>(s.requests.size()), s.requests.data(), &flag,
                        MPI_STATUSES_IGNORE),
            "MPI_Testall");
    }
  }

  void wait(int request) override {
    LT_CHECK(request >= 0 && request < static_cast<int>(started_.size()) &&
                 started_[request].active,
             "wait for collective {}, which is not in flight", request);
    Started& s = started_[request];
    if (s.shm >= 0) {
      shm_->wait(s.shm, [this] { progress_mpi(); });
      s = Started{};
      --in_flight_;
      return;
    }
    check(MPI_Waitall(static_cast<int>(s.requests.size()), s.requests.data(),
                      MPI_STATUSES_IGNORE),
          "MPI_Waitall");
    if (s.mean) scale(s.data, s.count, s.dtype, 1.0 / size_);
    s = Started{};
    --in_flight_;
  }

  int in_flight() const override { return in_flight_; }
  AllReduceCounts all_reduce_counts() const override {
    AllReduceCounts c = counts_;
    if (shm_) c.streamed = shm_->streamed();
    return c;
  }

  void broadcast(void* data, int64_t bytes, int root) override {
    LT_CHECK(root >= 0 && root < size_, "broadcast from rank {} in a job of {} ranks", root, size_);
    for (int64_t done = 0; done < bytes; done += kMaxCount) {
      const auto n = static_cast<int>(std::min(kMaxCount, bytes - done));
      check(MPI_Bcast(static_cast<char*>(data) + done, n, MPI_BYTE, root, MPI_COMM_WORLD),
            "MPI_Bcast");
    }
  }

  void all_gather(const void* in, void* out, int64_t bytes) override {
    LT_CHECK(bytes <= kMaxCount, "all_gather of {} bytes per rank: at most {}", bytes, kMaxCount);
    check(MPI_Allgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                        MPI_BYTE, MPI_COMM_WORLD),
          "MPI_Allgather");
  }

  bool control_all_gather(const void* in, void* out, int64_t bytes, double timeout_s) override {
    LT_CHECK(bytes <= kMaxCount, "all_gather of {} bytes per rank: at most {}", bytes, kMaxCount);
    MPI_Request request;
    check(MPI_Iallgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes),
                         MPI_BYTE, control_, &request),
          "MPI_Iallgather");
    return wait_for(request, timeout_s);
  }

  bool control_broadcast(void* data, int64_t bytes, int root, double timeout_s) override {
    LT_CHECK(root >= 0 && root < size_, "broadcast from rank {} in a job of {} ranks", root, size_);
    LT_CHECK(bytes <= kMaxCount, "control broadcast of {} bytes: at most {}", bytes, kMaxCount);
    MPI_Request request;
    check(MPI_Ibcast(data, static_cast<int>(bytes), MPI_BYTE, root, control_, &request),
          "MPI_Ibcast");
    return wait_for(request, timeout_s);
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

 private:
  static void scale(void* data, int64_t count, DType dtype, double s) {
    if (dtype == DType::F32) {
      auto* p = static_cast<float*>(data);
      const auto f = static_cast<float>(s);
      for (int64_t i = 0; i < count; ++i) p[i] *= f;
    } else {
      auto* p = static_cast<double*>(data);
      for (int64_t i = 0; i < count; ++i) p[i] *= s;
    }
  }

  // A reduce-scatter or all-gather through the shared segment: `start(first)` starts it there.
  // Returns its request, or -1 when it does not fit (nothing is started; MPI takes it).
  template <typename Start>
  int start_shm(Start start) {
    const bool first = in_flight_ == 0;
    if (first) grow_shm();
    const int id = start(first);
    if (id < 0) return -1;
    Started& s = new_started(nullptr, 0, DType::F32, false);
    s.shm = id;
    ++in_flight_;
    return static_cast<int>(&s - started_.data());
  }

  // At the first collective of an epoch: when the last epoch's collectives did not all fit in
  // the shared segment, every rank maps a larger one (rank 0 creates it, each rank reserves its
  // own part's pages). A failure leaves the segment as it was, the rest to MPI, and the size
  // where it is for the rest of the job.
  void grow_shm() {
    const int64_t want = std::min(kMaxShmCapacity, (shm_->epoch_demand() + kShmGrain - 1) /
                                                       kShmGrain * kShmGrain);
    if (shm_failed_ || want <= shm_->capacity()) return;
    shm_->quiesce();  // nobody reads the old segment any more
    const int64_t part = ShmAllReduce::part_bytes(want);
    char name[64] = {};
    std::string error;
    ShmSegment segment;
    if (rank_ == 0) {
      // A name no other job on this host (another PID namespace included) picks.
      std::snprintf(name, sizeof name, "/lazytrain.%d.%d.%08x", static_cast<int>(getpid()),
                    ++segments_made_, static_cast<unsigned>(std::random_device{}()));
      error = segment.create(name, part * size_);
      if (!error.empty()) name[0] = 0;
    }
    check(MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
    if (rank_ != 0 && name[0]) error = segment.open(name, part * size_);
    if (error.empty() && name[0]) error = segment.reserve(rank_ * part, part);
    int mine = error.empty() && name[0], all = 0;
    check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    if (rank_ == 0 && name[0]) ShmSegment::unlink(name);  // every rank has it mapped, or failed
    if (!all) {
      shm_failed_ = true;
      if (!error.empty())
        std::fprintf(stderr, "lazytrain: rank %d: %s: the all-reduces that do not fit in %lld "
                     "bytes of shared memory go through MPI\n", rank_, error.c_str(),
                     static_cast<long long>(shm_->capacity()));
      return;
    }
    std::vector<std::byte*> parts(static_cast<size_t>(size_));
    for (int q = 0; q < size_; ++q) parts[q] = segment.data() + q * part;
    shm_->attach(std::move(parts), want);
    segment_ = std::move(segment);
  }

  // A collective in flight: its MPI requests (one per piece of at most kMaxCount elements), and
  // what wait() finishes; or its id in the shared segment.
  struct Started {
    std::vector<MPI_Request> requests;
    void* data = nullptr;
    int64_t count = 0;
    DType dtype = DType::F32;
    bool mean = false;
    bool active = false;
    int shm = -1;
    // The operand of a reduce-scatter or all-gather, copied at the start: a step's buffer plan
    // frees an operand once its last reader has started, as an all-reduce's (copied into its
    // result at the start) allows.
    std::vector<std::byte> staged;
  };
  // A free entry of started_ (reused, or a new one), active, for a collective that wait()
  // finishes by scaling `count` elements at `data` when `mean`.
  Started& new_started(void* data, int64_t count, DType dtype, bool mean) {
    size_t r = 0;
    while (r < started_.size() && started_[r].active) ++r;
    if (r == started_.size()) started_.emplace_back();
    started_[r] = Started{{}, data, count, dtype, mean, true, -1, {}};
    return started_[r];
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::vector<Started> started_;  // indexed by request; inactive entries are reused
  int in_flight_ = 0;
  MPI_Comm control_ = MPI_COMM_NULL;  // control_all_gather's channel
  std::optional<ShmAllReduce> shm_;  // all-reduces through shared memory: one host only
  ShmSegment segment_;
  bool shm_failed_ = false;
  AllReduceCounts counts_;
  int segments_made_ = 0;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi(bool shm_all_reduce, StorePolicy stores) {
  return std::make_unique<MpiCommunicator>(shm_all_reduce, stores);
}

}  // namespace lt::rt::comm
