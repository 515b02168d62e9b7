// The buffer plan: where each value a compiled step writes lives. Intermediates share one arena
// (offsets reused once a value is dead), results get buffers of their own or take over a donated
// parameter's buffer. Plain data made by passes/buffer_plan and consumed by codegen.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/fusion_plan.h"
#include "ir/graph.h"

namespace lt::ir {

/// Alignment of every arena offset (a cache line; also what rt::Buffer gives).
inline constexpr int64_t kBufferAlign = 64;

/// One launch as the runtime runs a fusion plan: a Loop group is one launch (its inputs and
/// outputs); a Library group is one launch per node, in node order (the node's inputs, all its
/// outputs); an Epilogue group is one launch (its inputs; its outputs, and the library output
/// where KernelRules::epilogue_materializes). Liveness is counted in these launches.
struct PlannedLaunch {
  int group = 0;
  int node = -1;  // Library: the node; Loop: -1
  std::vector<Value> reads, writes;
};

/// The launches of `plan` (made under `rules`), in execution order.
std::vector<PlannedLaunch> launch_sequence(const Graph& g, const FusionPlan& plan,
                                           const KernelRules& rules);

/// Whether Loop group `grp` (or the loop of an Epilogue group whose library node does not read
/// `param`) may write its output `out` over parameter `param`'s buffer while it
/// reads `param`: `param` and `out` have the iteration shape and only elementwise nodes read
/// `param` (no `expand`, folded view or reduction), so each element is read at the very index
/// it is written; and `out` is computed from `param` through elementwise nodes only, so an
/// element's load precedes its store even with the kernel's pointers declared noalias.
bool can_write_in_place(const Graph& g, const FusionGroup& grp, Value out, int param);

enum class Storage : uint8_t {
  Param,    // the caller's parameter buffer
  Arena,    // [offset, offset + bytes) of the step's arena; dead after the step
  Result,   // a buffer of its own per run, handed to the caller
  Donated,  // a result written into parameter `donor`'s buffer (run time may still refuse)
  InResult,  // an intermediate written into result slot `in_result`'s buffer: the operand of the
             // collective that writes that result, which then reduces in place, copying nothing
};

struct BufferSlot {
  Value value;
  TensorType type;
  Storage storage = Storage::Arena;
  int64_t offset = 0;     // Arena: byte offset, a multiple of kBufferAlign
  int donor = -1;         // Donated: the parameter whose buffer it takes over
  bool in_place = false;  // Donated: its (Loop) launch also reads the donor, element by element
  int in_result = -1;     // InResult: the slot of the result whose buffer holds it
  int first = -1;         // the launch that writes it; -1 for a parameter
  int last = -1;          // the last launch that reads it; -1 when none does
  /// Arena: the slot of the value this one is a reshape of (a library reshape's output), or -1.
  /// It has that slot's bytes, and the reshape runs nothing (BufferPlan::elided). Or
  /// the slot of a collective's operand, which no later launch reads: the collective reduces in
  /// the operand's bytes instead of first copying them.
  int alias = -1;

  int64_t bytes() const { return static_cast<int64_t>(type.bytes()); }
  /// The last launch it must survive: the last read, or the write for a value nobody reads.
  int live_until() const { return std::max(first, last); }
};

struct BufferPlan {
  int num_params = 0;
  int num_launches = 0;
  /// [0, num_params): the parameters (slot p is parameter p); then every value a launch writes,
  /// in the order the launches write them.
  std::vector<BufferSlot> slots;
  /// Per node, per output: its slot, or -1 for a value that stays inside a loop kernel.
  std::vector<std::vector<int>> node_slots;
  std::vector<int> results;  // the slot of each graph result
  /// The library nodes that run nothing, by node id, ascending: reshapes whose output has their
  /// operand's bytes (BufferSlot::alias), so there is nothing to move. Codegen makes no launch for
  /// them (their planned launch stays in the count, doing nothing).
  std::vector<int> elided;

  bool is_elided(int node) const { return std::binary_search(elided.begin(), elided.end(), node); }

  int64_t arena_bytes = 0;      // one arena per run holds every intermediate
  int64_t live_peak_bytes = 0;  // most intermediate bytes live at one launch (arena lower bound)
  int64_t result_bytes = 0;     // fresh result buffers per run
  int64_t donated_bytes = 0;    // results written into donated parameter buffers
  int64_t naive_bytes = 0;      // one buffer per written value: no reuse, no donation

  /// The slot holding `v`, or -1 when no launch writes it.
  int slot_of(Value v) const {
    if (v.is_param()) return v.param_index();
    if (v.def >= static_cast<int>(node_slots.size())) return -1;
    const std::vector<int>& s = node_slots[v.def];
    return v.index < static_cast<int>(s.size()) ? s[v.index] : -1;
  }
};

/// Checks the plan's promises against the graph: every launch's values have slots; two arena
/// slots live at the same launch never overlap (so no launch writes over its own inputs), except a
/// reshape's or collective's output and the value it aliases (a library reshape of an arena
/// value, or a collective of one that no later launch reads); results are never in the arena;
/// a donated parameter is not a result and is read by no launch after the one that writes over
/// it, nor by that launch unless it is an in-place Loop launch; a value in a result's buffer is
/// the operand of the collective writing that (undonated) result, read by no later launch and
/// aliased by no slot; the elided nodes are exactly the library reshapes whose output aliases
/// their operand. `rules`: the backend's that made `fusion`. Throws lt::InternalError naming
/// the first violation.
void verify_buffer_plan(const Graph& g, const FusionPlan& fusion, const BufferPlan& plan,
                        const KernelRules& rules);

/// The plan as text: a summary line, then one line per written value, for dumps and tests:
///   buffers: 9 launches, arena 1024 bytes (live peak 1024), results 64, donated 128, naive 2048
///   %3 f32[4,8] arena @0 launches 2..4
///   %4 f32[32] arena @0 alias %3 (no launch) launches 4..6
///   %5 f32[32] in result %6 launches 6..7
std::string print_buffer_plan(const Graph& g, const BufferPlan& plan);

/// What a compiled graph holds while it runs, as PyTorch/XLA's post-compilation memory analysis
/// reports it: its inputs (the graph's parameters: weights, optimizer state, the batch), those
/// of them whose buffers its results take over (donated: the in-place updates), its fresh
/// results, and its intermediates, which one arena holds. The planned peak is inputs + arena +
/// fresh results: every byte the run can hold at once.
struct MemoryReport {
  int inputs = 0, donated_inputs = 0;
  int64_t input_bytes = 0, donated_bytes = 0;
  int64_t fresh_result_bytes = 0;
  int64_t arena_bytes = 0, live_peak_bytes = 0, naive_bytes = 0;
  int64_t planned_peak_bytes() const {
    return input_bytes + arena_bytes + fresh_result_bytes;
  }
};
MemoryReport memory_report(const Graph& g, const BufferPlan& plan);
/// One line, sizes in MB of 2^20 bytes:
///   memory: inputs 97.49 MB in 161 tensors (97.31 MB in 160 donated to results), fresh
///   results 0.02 MB, intermediates 401.25 MB (live peak 380.10 MB; 2104.00 MB without reuse),
///   planned peak 498.76 MB
std::string print_memory_report(const MemoryReport& r);

}  // namespace lt::ir
