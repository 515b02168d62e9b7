#include "passes/pipeline.h"

#include <utility>

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
    // fold makes new 0s and 1s (x * (2 * 0.5)); canonicalize never makes new all-constant nodes,
    // so this second run reaches the fixed point of both rule sets.
    log.run(g, canonicalize);
    log.run(g, cse);
  }
  log.run(g, dce);
}

bool run_default_pipeline(ir::Graph& g) {
  PassLogOptions opt;
  opt.verify = true;
  PassLog log(std::move(opt));
  run_pipeline(g, {}, log);
  return log.changed();
}

}  // namespace lt::passes
