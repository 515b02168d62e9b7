#include "passes/registry.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "passes/absorb_widening_casts.h"
#include "passes/bucket_all_reduce.h"
#include "passes/canonicalize.h"
#include "passes/channels_last.h"
#include "passes/collective_schedule.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/epilogue.h"
#include "passes/fold.h"
#include "passes/fold_relu_into_pool_grad.h"
#include "passes/kernel_order.h"
#include "passes/narrow_norm_gradients.h"
#include "passes/sink_reshapes.h"
#include "passes/wide_gemm_results.h"

namespace lt::passes {
namespace {

bool verify_pass(ir::Graph& g) {
  ir::verify(g);
  return false;
}

template <PassFn F>
bool rewrite_stage(LoweredGraph& l, const LowerOptions&) {
  if (!F(l.graph)) return false;
  l.fusion.reset();  // plans describe the graph they were made for
  l.buffers.reset();
  return true;
}

bool bucket_stage(LoweredGraph& l, const LowerOptions& o) {
  if (!bucket_all_reduce(l.graph, o.buckets)) return false;
  l.fusion.reset();
  l.buffers.reset();
  return true;
}

// The stages below edit or extend the fusion plan, so they need one.
void need_fusion(const LoweredGraph& l, std::string_view stage) {
  if (!l.fusion) throw Error(fmt::format("pass '{}' needs a fusion plan: run 'fuse' before it",
                                         stage));
}

bool fuse_stage(LoweredGraph& l, const LowerOptions& o) {
  l.fusion = fuse(l.graph, kernel_rules(o), o.fusion);
  l.buffers.reset();
  return true;
}

bool view_chains_stage(LoweredGraph& l, const LowerOptions& o) {
  need_fusion(l, "fuse_view_chains");
  if (!fuse_view_chains(l.graph, kernel_rules(o), o.fusion, *l.fusion)) return false;
  l.buffers.reset();
  return true;
}

bool siblings_stage(LoweredGraph& l, const LowerOptions& o) {
  need_fusion(l, "fuse_siblings");
  if (!fuse_siblings(l.graph, kernel_rules(o), o.fusion, *l.fusion)) return false;
  l.buffers.reset();
  return true;
}

bool epilogue_stage(LoweredGraph& l, const LowerOptions& o) {
  need_fusion(l, "attach_epilogues");
  if (attach_epilogues(l.graph, kernel_rules(o), *l.fusion) == 0) return false;
  l.buffers.reset();
  return true;
}

bool order_stage(LoweredGraph& l, const LowerOptions&) {
  need_fusion(l, "order_kernels");
  if (!order_groups(l.graph, *l.fusion)) return false;
  l.buffers.reset();
  return true;
}

bool collectives_stage(LoweredGraph& l, const LowerOptions&) {
  need_fusion(l, "schedule_collectives");
  if (!schedule_collectives(l.graph, *l.fusion)) return false;
  l.buffers.reset();
  return true;
}

bool buffer_plan_stage(LoweredGraph& l, const LowerOptions& o) {
  need_fusion(l, "buffer_plan");
  l.buffers = plan_buffers(l.graph, *l.fusion, kernel_rules(o), o.buffers);
  return true;
}

const PassEntry kPasses[] = {
#define LT_STAGE(id, name, kind, run, rewrite, summary) \
  {name, StageKind::kind, run, rewrite, summary},
#include "passes/stages.def"
#undef LT_STAGE
};

}  // namespace

std::span<const PassEntry> all_passes() { return kPasses; }

// The rows come from stages.def in its order, so an enumerator indexes its own row.
const PassEntry& entry(Stage s) { return kPasses[static_cast<size_t>(s)]; }

const PassEntry* find_pass(std::string_view name) {
  for (const PassEntry& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

const PassEntry* find_pass(PassFn fn) {
  for (const PassEntry& p : kPasses)
    if (p.rewrite == fn) return &p;
  return nullptr;
}

}  // namespace lt::passes
