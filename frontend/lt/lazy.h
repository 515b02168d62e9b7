// Lazy mode: ops record IR nodes instead of running; lt::mark_step() (or reading a value) cuts the
// pending graph of every live tensor, looks it up in the graph cache by structural hash, runs it,
// and turns each tensor into device data.
//
// Tensors of the two modes: eager tensors are device data, so lazy ops read them as graph
// parameters. A lazy tensor with pending work used by an op in eager mode is an error (call
// lt::mark_step() first); once materialized it is device data like any other.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt {

enum class Mode { Eager, Lazy };

Mode mode();
void set_mode(Mode m);

/// Sets the mode for a scope.
class ModeGuard {
 public:
  explicit ModeGuard(Mode m) : prev_(mode()) { set_mode(m); }
  ~ModeGuard() { set_mode(prev_); }
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;

 private:
  Mode prev_;
};

/// How lazy graphs are prepared: the settings LT_OPT_LEVEL, LT_EPILOGUES, LT_CHANNELS_LAST,
/// LT_WIDE_GEMM_RESULTS, LT_VERIFY, LT_CACHE_DIR, LT_BUCKET_FIRST_KB and LT_BUCKET_KB
/// (lt/options.h), typed.
struct CompileOptions {
  /// LT_OPT_LEVEL. 0: the reference interpreter; 1: passes, then every op its own kernel call;
  /// 2: passes, fusion and JIT-compiled loop kernels (the default).
  int opt_level = 2;
  /// LT_EPILOGUES. Opt level 2: a loop kernel that alone reads a matmul's or conv2d's output
  /// runs as its epilogue, on the output while it is still in cache.
  bool epilogues = true;
  /// LT_CHANNELS_LAST. Opt levels 1 and 2: convolutions, and the batch norms and elementwise ops
  /// between them, run on [N, H, W, C] activations, which oneDNN convolves without reordering.
  bool channels_last = true;
  /// LT_WIDE_GEMM_RESULTS. Opt levels 1 and 2: a bf16 matmul or convolution whose result is only
  /// ever cast back to f32 (autocast) writes its f32 accumulator instead of rounding it
  /// (passes/wide_gemm_results.h): closer to f32 training, no longer eager's bits.
  bool wide_gemm_results = true;
  bool verify = false;     ///< LT_VERIFY: re-verify the graph after every pass (tests turn it on)
  bool disk_cache = true;  ///< compiled objects kept in the folder LT_CACHE_DIR (not "off")
  /// LT_BUCKET_FIRST_KB and LT_BUCKET_KB: a replica's gradient all_reduces are packed into
  /// buckets of this many KiB (the first, then the others), each started as soon as the backward
  /// pass has computed its gradients. bucket_kb 0: one all_reduce per gradient.
  int64_t bucket_first_kb = 64;
  int64_t bucket_kb = 64;
};
/// The settings' effective values.
CompileOptions compile_options();
/// Overrides the settings that differ from compile_options(), validated like the variables (an
/// opt_level outside 0..2 throws lt::InputError). Turning disk_cache on where LT_CACHE_DIR was
/// off uses the default folder. Later graphs are prepared accordingly (the options are part of
/// the cache key: no stale code is reused).
void set_compile_options(const CompileOptions& o);

/// Materializes every live tensor with pending work, as one graph.
void mark_step(Loc loc = Loc::current());

/// A scalar baked into the graph as a constant (changing it recompiles). Other scalars, except
/// 0, 1 and -1, enter lazy graphs as 0-d parameters so a changing learning rate never recompiles.
Tensor constant(double value, DType dtype = DType::F32, Loc loc = Loc::current());

/// Empties the in-memory graph cache (tests, cold-start benchmarks).
void clear_graph_cache();

/// True when the tensor has lazy work not yet run.
bool is_pending(const Tensor& t);

namespace debug {
/// LT_DEBUG=1 (or set_enabled(true), which sets it): one line per graph run (hash, nodes, cache
/// hit/miss, times) on stderr, and on every recompile its cause and the first difference from
/// the nearest cached graph.
void set_enabled(bool on);
/// The debug lines printed since the last call (for tests and tools).
std::vector<std::string> take_log();
/// The largest planned peak of the graphs compiled so far (bytes its run can hold at once:
/// inputs, intermediates and fresh results; LT_DEBUG and the dump folder print the whole
/// report); 0 before any, and at opt level 0.
int64_t planned_peak_bytes();
/// The pending graph of these tensors as IR text, without running it.
std::string graph_text(std::span<const Tensor> tensors);
/// LT_PROFILE=1 (or set_profiling(true), which sets it): every launch of compiled steps (opt
/// level >= 1) is timed; profile_report() lists each graph's launches slowest first with their
/// share of its time (fused loop kernels by fusion-plan group, shape and ops; library calls by
/// op). It is printed at exit if LT_PROFILE is 1 then.
void set_profiling(bool on);
std::string profile_report();
}  // namespace debug

}  // namespace lt
