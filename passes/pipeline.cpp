#include "passes/pipeline.h"

#include <fmt/format.h>

#include <utility>

#include "ir/error.h"
#include "ir/hash.h"

namespace lt::passes {
namespace {

void stage(LoweredGraph& l, Stage s, const LowerOptions& o, PassLog& log) {
  log.run(l, entry(s), o);
}

}  // namespace

void plan_kernels(LoweredGraph& l, const LowerOptions& o, PassLog& log) {
  stage(l, Stage::Fuse, o, log);
  if (o.fusion.enabled && o.fusion.epilogues) stage(l, Stage::AttachEpilogues, o, log);
  stage(l, Stage::OrderKernels, o, log);
  stage(l, Stage::ScheduleCollectives, o, log);
}

LoweredGraph lower(ir::Graph g, const LowerOptions& o, PassLog& log) {
  log.verify(g);  // throws lt::Error naming the first malformed node
  LoweredGraph l{std::move(g), {}, {}};
  if (o.simplify) {
    stage(l, Stage::Canonicalize, o, log);
    stage(l, Stage::Fold, o, log);
    // fold makes new 0s and 1s (x * (2 * 0.5)); canonicalize never makes new all-constant nodes,
    // so this second run reaches the fixed point of both rule sets.
    stage(l, Stage::Canonicalize, o, log);
    stage(l, Stage::Cse, o, log);
  }
  if (o.channels_last) stage(l, Stage::ChannelsLast, o, log);
  stage(l, Stage::AbsorbWideningCasts, o, log);
  stage(l, Stage::NarrowNormGradients, o, log);
  if (o.wide_gemm_results) stage(l, Stage::WideGemmResults, o, log);
  if (o.simplify) {
    stage(l, Stage::SinkReshapes, o, log);
    stage(l, Stage::FoldReluIntoPoolGrad, o, log);
  }
  stage(l, Stage::Dce, o, log);
  stage(l, Stage::BucketAllReduce, o, log);
  plan_kernels(l, o, log);
  stage(l, Stage::BufferPlan, o, log);
  return l;
}

ir::FusionPlan fusion_plan(const ir::Graph& g, const LowerOptions& o) {
  LoweredGraph l{g, {}, {}};
  PassLog log;
  plan_kernels(l, o, log);
  return std::move(*l.fusion);
}

ir::FusionPlan fusion_plan(const ir::Graph& g, const FuseOptions& o) {
  LowerOptions lo;
  lo.fusion = o;
  return fusion_plan(g, lo);
}

LowerOptions at_opt_level(LowerOptions o, int level) {
  o.fusion.enabled = level >= 2;
  if (!o.fusion.enabled) o.fusion.epilogues = false;
  return o;
}

uint64_t options_key(const LowerOptions& o) {
  ir::Hasher h(0x6c6f7765726f7074ULL);
  h.add(o.simplify ? 1 : 0).add(o.channels_last ? 1 : 0).add(o.wide_gemm_results ? 1 : 0);
  const FuseOptions& f = o.fusion;
  h.add(f.enabled ? 1 : 0).add(f.epilogues ? 1 : 0);
  h.add(static_cast<uint64_t>(f.max_nodes_per_kernel));
  h.add(static_cast<uint64_t>(f.max_reductions_per_kernel));
  const BufferPlanOptions& b = o.buffers;
  h.add(b.donate ? 1 : 0).add(b.in_place_loops ? 1 : 0).add(b.alias_reshapes ? 1 : 0);
  h.add(b.alias_collectives ? 1 : 0);
  h.add(static_cast<uint64_t>(o.buckets.first_bytes)).add(static_cast<uint64_t>(o.buckets.bytes));
  return h.value();
}

void run_passes(LoweredGraph& l, std::span<const std::string> names, const LowerOptions& o,
                PassLog& log) {
  for (const std::string& name : names) {
    const PassEntry* p = find_pass(name);
    if (!p) throw Error(fmt::format("unknown pass '{}' (see lt-opt --list-passes)", name));
    if (p->kind == StageKind::Pipeline) {
      l = lower(std::move(l.graph), o, log);
    } else {
      log.run(l, *p, o);
    }
  }
}

}  // namespace lt::passes
