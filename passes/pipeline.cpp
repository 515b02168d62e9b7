#include "passes/pipeline.h"

#include <fmt/format.h>

#include <utility>

#include "ir/error.h"

namespace lt::passes {
namespace {

void stage(LoweredGraph& l, std::string_view name, const LowerOptions& o, PassLog& log) {
  log.run(l, *find_pass(name), o);
}

}  // namespace

LoweredGraph lower(ir::Graph g, const LowerOptions& o, PassLog& log) {
  log.verify(g);  // throws lt::Error naming the first malformed node
  LoweredGraph l{std::move(g), {}, {}};
  if (o.simplify) {
    stage(l, "canonicalize", o, log);
    stage(l, "fold", o, log);
    // fold makes new 0s and 1s (x * (2 * 0.5)); canonicalize never makes new all-constant nodes,
    // so this second run reaches the fixed point of both rule sets.
    stage(l, "canonicalize", o, log);
    stage(l, "cse", o, log);
  }
  if (o.channels_last) stage(l, "channels_last", o, log);
  stage(l, "absorb_widening_casts", o, log);
  stage(l, "narrow_norm_gradients", o, log);
  if (o.wide_gemm_results) stage(l, "wide_gemm_results", o, log);
  if (o.simplify) {
    stage(l, "sink_reshapes", o, log);
    stage(l, "fold_relu_into_pool_grad", o, log);
  }
  stage(l, "dce", o, log);
  stage(l, "bucket_all_reduce", o, log);
  stage(l, "fuse", o, log);
  stage(l, "buffer_plan", o, log);
  return l;
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
