// All-reduces among the ranks of one host through a memory segment every rank maps. Each rank
// copies its operand into its part of the segment, reduces its own slice of the elements over
// the ranks, and copies the other slices' results out, each at whatever progress point it
// reaches them: no rank has to be inside a call at the same moment as another. MPI's messages
// between processes advance only while both sides are inside MPI calls, which a step makes only
// between its launches, so a large all-reduce started before a long convolution waited at the
// end for most of its protocol. No MPI here: the communicator creates and maps the segment.
//
// Rank q's part: three sequence counters (one cache line each: operands arrived, slice reduced,
// results copied out) and `capacity` bytes for the operands of the collectives in flight. A
// collective takes the next bytes of every part (the same offsets on every rank, since every
// rank makes the same calls in the same order); the offsets restart at the first collective
// started with none in flight (an epoch: in a training step, the step's buckets), once every
// rank has copied out every earlier result.
//
// A reduce-scatter goes the same way with block q of the operand as rank q's slice, reduced
// straight into the result; an all-gather copies its operand into the rank's part and each rank
// copies every other part out. They share the segment, the counters and the epochs with the
// all-reduces.
//
// An all-reduce of at least kLargeBytes writes into the segment with the stores store_choice.h
// picks (cached or streaming); smaller ones, and the other collectives, with cached stores.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "ir/attrs.h"
#include "ir/dtype.h"
#include "runtime/comm/store_choice.h"

namespace lt::rt::comm {

class ShmAllReduce {
 public:
  /// Bytes of a rank's part of a segment holding `capacity` bytes of operands (a multiple of
  /// the page size).
  static int64_t part_bytes(int64_t capacity);

  /// The smallest collective, in bytes, whose stores store_choice.h picks.
  static constexpr int64_t kLargeBytes = 64 << 10;

  ShmAllReduce(int rank, int size, StorePolicy stores = StorePolicy::Auto);
  /// Works in a new segment from now on: parts[q] is rank q's part as mapped in this process,
  /// zero-filled. Call with nothing in flight, once every rank has called quiesce() (nobody
  /// reads the old segment any more); every rank attaches the same segment.
  void attach(std::vector<std::byte*> parts, int64_t capacity);
  int64_t capacity() const { return capacity_; }

  /// Starts the in-place all-reduce of `data` (f32, f64, i32 or i64; Mean: float), or returns
  /// -1 when it does not fit beside the collectives in flight (the caller runs it another way).
  /// Either way its bytes count towards the epoch's demand. `first`: no collective is in flight,
  /// here or elsewhere (a new epoch starts). `data` must stay untouched until wait() returns.
  int start(void* data, int64_t count, DType dtype, ir::ReduceKind op, bool first);
  /// Starts a reduce-scatter: `in` holds size() blocks of `count` elements; `out` (not
  /// overlapping `in`) gets the reduction over the ranks of block rank(). `in` is read before
  /// this returns; `out` stays untouched until wait(). -1 and `first` as start().
  int start_reduce_scatter(const void* in, void* out, int64_t count, DType dtype,
                           ir::ReduceKind op, bool first);
  /// Starts an all-gather: `out` (not overlapping `in`) gets size() blocks of `bytes` bytes,
  /// block q rank q's `in`, which is read before this returns. -1 and `first` as start().
  int start_all_gather(const void* in, void* out, int64_t bytes, bool first);
  /// Does whatever work of the collectives in flight the other ranks' progress allows.
  void progress();
  /// Whether collective `id` has finished (its result is in `data`).
  bool done(int id) const;
  /// Returns once `id` has finished, progressing meanwhile (and calling `meanwhile`, when
  /// given, between tries); then `id` is free again.
  void wait(int id, const std::function<void()>& meanwhile = {});
  int in_flight() const { return in_flight_; }
  /// The bytes the collectives of the epoch so far asked for, fitting or not (before a new
  /// epoch's first start: the whole last epoch's).
  int64_t epoch_demand() const { return demand_; }
  /// Returns once every rank has copied out every collective started so far.
  void quiesce() const;
  /// The collectives started so far whose bytes this rank wrote with streaming stores.
  int64_t streamed() const { return streamed_; }

 private:
  enum class Stage { Arrived, Reduced, Done };  // in order: advance() goes one on
  enum class Kind { AllReduce, ReduceScatter, AllGather };
  struct Collective {
    uint64_t seq = 0;  // 1, 2, ... in start order, the same on every rank
    Kind kind = Kind::AllReduce;
    // All-reduce: the operand and result. Reduce-scatter: the result (the rank's block).
    // All-gather: the result; `count` is then its bytes per rank, `dtype` Bool (a byte each).
    std::byte* data = nullptr;
    int64_t count = 0;
    DType dtype = DType::F32;
    ir::ReduceKind op = ir::ReduceKind::Sum;
    int64_t offset = 0;  // of its operands in every part
    Stage stage = Stage::Arrived;
    bool active = false;
    Stores stores = Stores::Cached;
    bool timed = false;   // a large collective whose work is measured for choice_
    int64_t work_ns = 0;  // this rank's copying and reducing so far
  };

  // Rank q's elements of an all-reduce of `count`: [lo, hi).
  std::pair<int64_t, int64_t> slice(int64_t count, int q) const;
  // A collective of `bytes` segment bytes per part, if it fits: its id, with seq, offset and
  // the epoch's bookkeeping set; -1 otherwise.
  int begin(int64_t bytes, bool first);
  // Publishes a begun collective's arrival and puts it in flight.
  int launch(int id);
  std::byte* operands(int q, const Collective& c) const;
  uint64_t lowest(int counter) const;  // the lowest value of a counter over the ranks
  void publish(int counter, uint64_t seq);
  void reduce(Collective& c);
  void copy_out(Collective& c);
  // Runs `work` on c, timing it when c is measured.
  void run_timed(Collective& c, void (ShmAllReduce::*work)(Collective&));
  void copy_in(Collective& c);
  // Takes the collectives at stage `from` one stage on, in start order, as far as every rank
  // has published `ready` for them: `work`, then this rank publishes `published`.
  void advance(Stage from, int ready, int published, void (ShmAllReduce::*work)(Collective&));

  int rank_, size_;
  std::vector<std::byte*> parts_;
  int64_t capacity_ = 0;
  uint64_t seq_ = 0;        // the last collective started
  int64_t next_offset_ = 0;  // of the epoch's next collective
  int64_t demand_ = 0;
  bool reusing_ = false;     // no collective of this epoch is here yet
  int in_flight_ = 0;
  std::vector<Collective> collectives_;  // indexed by id; inactive entries are reused
  std::deque<int> order_;                // the ids in flight, in start order
  StoreChoice choice_;
  uint64_t large_ = 0;       // large collectives started
  int64_t streamed_ = 0;
  bool settled_ = false;     // an epoch has begun in this segment (its first one faults pages in)
  bool measuring_ = false;   // the epoch's large collectives are measured
};

}  // namespace lt::rt::comm
