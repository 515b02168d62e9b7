#include "frontend/lazy/prepared_step.h"

#include <fmt/format.h>

#include "backends/cpu/cpu_backend.h"
#include "codegen/object_cache.h"
#include "frontend/lazy/dumps.h"
#include "frontend/options/store.h"
#include "lt/metrics.h"

namespace lt::lazy {
namespace {

// What compiled steps lower and compile through: the CPU, the one backend there is.
const backends::Backend& backend() { return backends::cpu(); }

}  // namespace

std::vector<rt::BufferPtr> PreparedStep::run(std::span<const rt::BufferPtr> params,
                                             std::span<const long> owned_refs) const {
  if (!executable_) return interpreted_->run(params);
  if (profiling()) {
    if (!profile_registered_.exchange(true)) register_profile(profile_);
    return executable_->run(params, owned_refs, profile_->begin_run());
  }
  return executable_->run(params, owned_refs);
}

std::shared_ptr<PreparedStep> PreparedStep::prepare(ir::Graph traced, const CompileOptions& o,
                                                    uint64_t key) {
  auto step = std::make_shared<PreparedStep>();
  if (o.opt_level <= 0) {
    step->interpreted_ = std::make_unique<rt::InterpretedGraph>(traced);
    step->traced_ = std::move(traced);
    return step;
  }
  const std::string dir = dump_dir();
  const std::string prefix = fmt::format("{:016x}", key);
  passes::PassLog log({o.verify, dir, prefix});
  const passes::LoweredGraph l = backend().lower(traced, lower_options(o), log);
  for (const passes::PassRecord& r : log.records()) metrics::time_ns("pass " + r.name, r.ns);
  codegen::CompileStats stats;
  const codegen::ObjectCacheStats before = codegen::object_cache_stats();
  const std::string cache_dir = o.disk_cache ? options::text(options::Setting::CacheDir) : "";
  step->executable_ = backend().compile(l, {dir, prefix, cache_dir}, &stats);
  step->profile_ = std::make_shared<LaunchProfile>(prefix, l.graph, *l.fusion, *step->executable_);
  const codegen::ObjectCacheStats after = codegen::object_cache_stats();
  metrics::count("loop_kernels", stats.loop_kernels);
  metrics::count("disk_cache_hit", static_cast<int64_t>(after.hits - before.hits));
  metrics::count("llvm_compile", static_cast<int64_t>(after.misses - before.misses));
  if (after.corrupt != before.corrupt)
    metrics::count("disk_cache_corrupt", static_cast<int64_t>(after.corrupt - before.corrupt));
  step->disk_hit_ = after.hits > before.hits && after.misses == before.misses;
  if (l.buffers) step->memory_ = ir::memory_report(l.graph, *l.buffers);
  step->object_file_ = stats.object_file;
  metrics::time_ns("codegen", static_cast<int64_t>(stats.llvm_ms * 1e6));
  step->traced_ = std::move(traced);
  return step;
}

passes::LowerOptions lower_options(const CompileOptions& o) {
  passes::LowerOptions l;
  l.fusion.epilogues = o.epilogues;
  l.channels_last = o.channels_last;
  l.wide_gemm_results = o.wide_gemm_results;
  l.buckets = {o.bucket_first_kb << 10, o.bucket_kb << 10};
  return backend().options(passes::at_opt_level(l, o.opt_level));
}

uint64_t environment_key(const CompileOptions& o) {
  // The host CPU is not here: the in-memory cache lives in one process, and the on-disk object
  // key (codegen::object_key) carries the CPU. Opt level 0 runs the interpreter: no options.
  if (o.opt_level <= 0) return 0x696e746572707265ULL;
  return passes::options_key(lower_options(o));
}

}  // namespace lt::lazy
