// A compiled step: a list of launches over buffer slots. Codegen fills it (function pointers of
// JIT-compiled loop kernels, or eager kernels for library ops, and where each slot lives from the
// buffer plan); the runtime runs it.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "runtime/buffer.h"

namespace lt::rt {

using BufferPtr = std::shared_ptr<Buffer>;
struct TensorRef;  // runtime/kernels/kernel.h

/// Signature of a JIT-compiled loop kernel: `buffers` holds the data pointers of the launch's
/// slots (inputs then outputs); the kernel computes rows [row_begin, row_end) of its iteration
/// space (rows of the innermost dim, see Launch::rows).
using LoopKernelFn = void (*)(void* const* buffers, int64_t row_begin, int64_t row_end);

/// A library launch's epilogue: a compiled loop kernel over the library op's output, run on
/// each block of that output as the eager kernel finishes it (rt::OutputBlocks), so the block
/// is still in cache. Its rows split into blocks evenly: block i of `block_elems` output
/// elements is rows [i * block_rows, (i + 1) * block_rows).
struct EpilogueLaunch {
  LoopKernelFn fn = nullptr;
  std::vector<int> in_slots, out_slots;  // the loop's buffers, inputs then outputs
  std::vector<int> written_over;         // as Launch::written_over, for the loop
  int source = 0;  // in_slots[source] is the library output: its slot, or -1 for per-block
                   // scratch (the launch then has no out_slots)
  TensorType library_out;
  int64_t block_elems = 0;
  int64_t block_rows = 0;
  int64_t row_grain = 1;
};

struct Launch {
  /// Start and Done are a collective (op, attrs) split in two: Start copies its operand into its
  /// output (unless the two are one buffer: an arena alias, or Slot::shares) and starts the
  /// collective there; Done (in_slots: that output) waits for it. The
  /// launches between them run while the collective is in flight.
  enum class Kind : uint8_t { Loop, Library, Start, Done } kind = Kind::Library;
  // Loop: a compiled kernel split across the thread pool by rows.
  LoopKernelFn fn = nullptr;
  /// Per output, the input (an index into in_slots) it is written over, element by element, or
  /// -1 (empty: none). The kernel stores such an output through that input's pointer, so it
  /// runs on whatever buffer the input's pointer gives: where run() refused the output's
  /// donation, that is the output's fresh buffer, holding a copy of the input (see run()).
  std::vector<int> written_over;
  int64_t rows = 0;       // iteration-space rows
  int64_t row_grain = 1;  // rows per chunk at least
  // Library: an eager kernel call, with a compiled epilogue or without.
  ir::Op op{};
  ir::Attrs attrs;
  std::optional<EpilogueLaunch> epilogue;
  // Both: slots read and written (slot numbers index the step's buffer table; their types are
  // the executable's slot types).
  std::vector<int> in_slots, out_slots;
  std::string name;  // for metrics and dumps
  int group = -1;    // the fusion-plan group it runs (profiles); -1: none
  int start = -1;    // Done: the index of its Start launch
};

/// Where a slot's data lives during a run.
struct Slot {
  enum class Kind : uint8_t {
    Param,  // the caller's parameter buffer (slot i is parameter i)
    Arena,  // [offset, offset + bytes) of the step's arena; dead when run() returns
    Owned,  // a Buffer of its own, made by the launch that writes it: a result (handed to the
            // caller) or a temporary (freed after its last read)
  } kind = Kind::Owned;
  TensorType type;
  int64_t offset = 0;  // Arena: byte offset, 64-byte aligned
  int donor = -1;      // Owned result: a parameter whose buffer may hold it instead (see run())
  int shares = -1;     // Owned temporary: the later, undonated result slot whose buffer it is
};

/// The buffer plan's numbers (ir::BufferPlan), for metrics and reports.
struct MemoryPlan {
  int64_t arena_bytes = 0;      // the arena, one allocation per run (see run())
  int64_t live_peak_bytes = 0;  // most intermediate bytes live at once (the arena's lower bound)
  int64_t result_bytes = 0;     // fresh result buffers per run
  int64_t donated_bytes = 0;    // results the plan puts into donated parameter buffers
  int64_t naive_bytes = 0;      // one buffer per written value, as without a plan
};

/// Counters over every run() so far.
struct RunStats {
  int64_t runs = 0;
  int64_t donations_taken = 0;    // results written into a parameter's buffer
  int64_t donations_refused = 0;  // ... that got a fresh buffer instead (held elsewhere)
};

/// Buffer slots: [0, num_params) are the parameters; the others live in the arena or in buffers
/// of their own (Slot); the results are the slots in result_slots.
class Executable {
 public:
  Executable(std::vector<Slot> slots, std::vector<Launch> launches, std::vector<int> result_slots,
             MemoryPlan memory, std::shared_ptr<void> keep_alive);

  /// Runs the step; returns one buffer per result, each independent of the arena: a fresh
  /// buffer, a parameter's (a result that is a parameter, or a donation), or shared with another
  /// result that is the same value.
  ///
  /// Donation. A result whose slot has a donor parameter p is written into params[p]'s buffer
  /// only if `owned_refs` says nobody else can see that buffer: owned_refs[p] is the number of
  /// references to params[p] that belong to the caller and through which nobody reads after
  /// run() returns (the entry in `params` itself is one). The buffer is taken iff
  /// params[p].use_count() <= owned_refs[p] and no other entry of `params` is the same buffer;
  /// otherwise the result gets a fresh buffer and params[p] is left untouched. An empty
  /// `owned_refs` (or 0) never donates. use_count() is exact only while no other thread copies
  /// or drops references to that buffer during the call, which a caller that owns every
  /// reference it counts guarantees.
  ///
  /// Arena. Each run allocates the arena as one Buffer and drops it after the last launch that
  /// touches it (Buffer's block cache makes the repeated same-size allocation cheap). Keeping one
  /// per Executable instead would hold every cached step's arena at once (a first step's graph
  /// and the steady step's, for one), which adds one arena to the lazy peak per cached graph.
  /// run() is thread safe.
  ///
  /// Profiling. A non-empty `launch_ns` (one entry per launch) gets each launch's wall time in
  /// nanoseconds added to it.
  std::vector<BufferPtr> run(std::span<const BufferPtr> params,
                             std::span<const long> owned_refs = {},
                             std::span<int64_t> launch_ns = {}) const;

  const std::vector<Launch>& launches() const { return launches_; }
  const std::vector<Slot>& slots() const { return slots_; }
  const MemoryPlan& memory() const { return memory_; }
  RunStats run_stats() const;

 private:
  void check_written_over(size_t launch, std::span<const int> over,
                          std::span<const int> in_slots, std::span<const int> out_slots) const;
  void run_with_epilogue(const Launch& l, std::span<void* const> data,
                         std::span<const TensorRef> ins) const;
  void take_donations(std::span<const BufferPtr> params, std::span<const long> owned_refs,
                      std::vector<BufferPtr>& owned) const;

  int num_params_ = 0;
  std::vector<Slot> slots_;
  std::vector<Launch> launches_;
  std::vector<int> result_slots_;
  MemoryPlan memory_;
  std::vector<std::vector<int>> free_after_;  // per launch: temporaries that die after it
  std::vector<int> donated_slots_;            // slots with a donor
  std::vector<int> arena_slots_;
  bool has_collectives_ = false;      // some launch starts a collective
  int arena_done_after_ = -1;         // the last launch that reads or writes an arena slot
  std::shared_ptr<void> keep_alive_;  // owns the JIT code the launches point into

  mutable std::atomic<int64_t> runs_{0}, donations_taken_{0}, donations_refused_{0};
};

/// The launch list as text, one line per launch in run order, for dumps and tests:
///   #0 loop lt_kernel_0 (in: s0 s1; out: s4)
///   #1 library matmul (in: s4 s2; out: s5)
///   #2 start all_reduce (in: s5; out: s6)
///   #5 done all_reduce of #2 (in: s6)
std::string print_launches(const Executable& exe);

}  // namespace lt::rt
