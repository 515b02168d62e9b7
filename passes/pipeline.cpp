#include "passes/pipeline.h"

#include "passes/canonicalize.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold.h"

namespace lt::passes {

void run_pipeline(ir::Graph& g, const PipelineOptions& opt, PassLog& log) {
  log.verify(g);  // throws lt::Error naming the first malformed node
  if (opt.simplify) {
    log.run(g, canonicalize);
    log.run(g, fold);
    log.run(g, cse);
  }
  log.run(g, dce);
}

bool run_default_pipeline(ir::Graph& g) {
  PassLog log({.verify = true});
  run_pipeline(g, {}, log);
  return log.changed();
}

}  // namespace lt::passes
