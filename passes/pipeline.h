// The compile pipeline: the one place that fixes the order of the passes (DESIGN.md section 6).
#pragma once
#include "ir/graph.h"
#include "passes/pass_log.h"

namespace lt::passes {

/// What the pipeline does; part of the compile cache key (fusion and AMP settings join here).
struct PipelineOptions {
  bool simplify = true;  ///< canonicalize, fold and cse; off leaves verify and dce (for bisecting)
};

/// Runs verify -> canonicalize -> fold -> canonicalize -> cse -> dce on g through `log`, which times, verifies
/// and dumps each pass. Throws lt::Error when g is malformed on entry.
void run_pipeline(ir::Graph& g, const PipelineOptions& opt, PassLog& log);

/// run_pipeline with default options and verification after every pass (lt-opt's "pipeline").
/// Returns true if the graph changed.
bool run_default_pipeline(ir::Graph& g);

}  // namespace lt::passes
