#include "frontend/lazy/prepared_step.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <functional>

#include "codegen/compile.h"
#include "codegen/jit.h"
#include "codegen/object_cache.h"
#include "frontend/options/store.h"
#include "lt/metrics.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"
#include "passes/pipeline.h"

namespace lt::lazy {

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
  const std::string dump_dir = options::text(options::Setting::DumpDir);
  const std::string prefix = fmt::format("{:016x}", key);
  ir::Graph g = traced;
  passes::PassLog log({o.verify, dump_dir, prefix});
  passes::run_pipeline(g, {}, log);
  for (const passes::PassRecord& r : log.records()) metrics::time_ns("pass " + r.name, r.ns);
  const auto t0 = std::chrono::steady_clock::now();
  const ir::FusionPlan plan =
      passes::fuse(g, {.enabled = o.opt_level >= 2, .epilogues = o.epilogues});
  metrics::time_ns("pass fuse", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - t0)
                                    .count());
  if (!dump_dir.empty())
    std::ofstream(fmt::format("{}/{}.fusion.txt", dump_dir, prefix)) << ir::print_fusion_plan(g, plan);
  const auto t1 = std::chrono::steady_clock::now();
  const ir::BufferPlan buffers = passes::plan_buffers(g, plan);
  if (o.verify) ir::verify_buffer_plan(g, plan, buffers);
  metrics::time_ns("pass buffer_plan", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                           std::chrono::steady_clock::now() - t1)
                                           .count());
  if (!dump_dir.empty())
    std::ofstream(fmt::format("{}/{}.buffers.txt", dump_dir, prefix)) << ir::print_buffer_plan(g, buffers);
  codegen::CompileStats stats;
  const codegen::ObjectCacheStats before = codegen::object_cache_stats();
  // The object depends on the graph (prefix), the codegen version and the plans; hashing the
  // plans' text keeps a changed fusion or schedule from loading stale kernels.
  const uint64_t plans = std::hash<std::string>{}(ir::print_fusion_plan(g, plan) +
                                                  ir::print_buffer_plan(g, buffers));
  const std::string cache_key =
      o.disk_cache ? fmt::format("{}-cg{}-{:016x}", prefix, codegen::kCodegenVersion, plans)
                   : std::string();
  const std::string cache_dir = o.disk_cache ? options::text(options::Setting::CacheDir) : "";
  step->executable_ =
      codegen::compile(g, plan, buffers, {dump_dir, prefix, cache_key, cache_dir}, &stats);
  step->profile_ = std::make_shared<LaunchProfile>(prefix, g, plan, *step->executable_);
  const codegen::ObjectCacheStats after = codegen::object_cache_stats();
  metrics::count("loop_kernels", stats.loop_kernels);
  metrics::count("disk_cache_hit", static_cast<int64_t>(after.hits - before.hits));
  metrics::count("llvm_compile", static_cast<int64_t>(after.misses - before.misses));
  if (after.corrupt != before.corrupt) metrics::count("disk_cache_corrupt", static_cast<int64_t>(after.corrupt - before.corrupt));
  step->disk_hit_ = after.hits > before.hits && after.misses == before.misses;
  metrics::time_ns("codegen", static_cast<int64_t>(stats.llvm_ms * 1e6));
  step->traced_ = std::move(traced);
  return step;
}

uint64_t environment_key(const CompileOptions& o) {
  if (o.opt_level <= 0) return 0x696e7465727031ULL;  // the reference interpreter, v1
  static const uint64_t host = std::hash<std::string>{}(codegen::Jit::host_cpu() + "|" +
                                                        codegen::Jit::host_features());
  const uint64_t level = static_cast<uint64_t>(o.opt_level) * 2 + (o.epilogues ? 0 : 1);
  return host ^ (0x636f6d70696c6531ULL + level * 0x9e3779b97f4a7c15ULL);
}

}  // namespace lt::lazy
