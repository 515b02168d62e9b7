#include "backends/cpu/cpu_recipe.h"

#include <utility>

#include "passes/runner.h"

namespace lt::backends {

using passes::Stage;

void cpu_kernel_recipe(passes::LoweredGraph& l, const passes::LowerOptions& o,
                       passes::PassLog& log) {
  passes::run_stage(l, Stage::Fuse, o, log);
  if (o.fusion.enabled) {
    passes::run_stage(l, Stage::FuseViewChains, o, log);
    passes::run_stage(l, Stage::FuseSiblings, o, log);
  }
  if (o.fusion.enabled && o.fusion.epilogues) passes::run_stage(l, Stage::AttachEpilogues, o, log);
  passes::run_stage(l, Stage::OrderKernels, o, log);
  passes::run_stage(l, Stage::ScheduleCollectives, o, log);
}

passes::LoweredGraph cpu_recipe(ir::Graph g, const passes::LowerOptions& o, passes::PassLog& log) {
  log.verify(g);  // throws lt::Error naming the first malformed node
  passes::LoweredGraph l{std::move(g), {}, {}};
  auto stage = [&](Stage s) { passes::run_stage(l, s, o, log); };
  if (o.simplify) {
    stage(Stage::Canonicalize);
    stage(Stage::Fold);
    // fold makes new 0s and 1s (x * (2 * 0.5)); canonicalize never makes new all-constant nodes,
    // so this second run reaches the fixed point of both rule sets.
    stage(Stage::Canonicalize);
    stage(Stage::Cse);
  }
  if (o.channels_last) stage(Stage::ChannelsLast);
  stage(Stage::AbsorbWideningCasts);
  stage(Stage::NarrowNormGradients);
  if (o.wide_gemm_results) stage(Stage::WideGemmResults);
  if (o.simplify) {
    stage(Stage::SinkReshapes);
    stage(Stage::FoldReluIntoPoolGrad);
  }
  stage(Stage::Dce);
  stage(Stage::BucketAllReduce);
  cpu_kernel_recipe(l, o, log);
  stage(Stage::BufferPlan);
  return l;
}

}  // namespace lt::backends
