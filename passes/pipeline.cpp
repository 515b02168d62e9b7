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
