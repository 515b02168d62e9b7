#include "backends/backend.h"

#include <utility>

#include "passes/runner.h"

namespace lt::backends {

passes::LowerOptions Backend::options(passes::LowerOptions o) const {
  o.rules = &rules();
  return o;
}

passes::LoweredGraph Backend::lower(ir::Graph g, const passes::LowerOptions& o,
                                    passes::PassLog& log) const {
  return recipe(std::move(g), options(o), log);
}

void Backend::plan_kernels(passes::LoweredGraph& l, const passes::LowerOptions& o,
                           passes::PassLog& log) const {
  kernel_recipe(l, options(o), log);
}

ir::FusionPlan Backend::fusion_plan(const ir::Graph& g, const passes::LowerOptions& o) const {
  passes::LoweredGraph l{g, {}, {}};
  passes::PassLog log;
  plan_kernels(l, o, log);
  return std::move(*l.fusion);
}

ir::FusionPlan Backend::fusion_plan(const ir::Graph& g, const passes::FuseOptions& o) const {
  passes::LowerOptions lo;
  lo.fusion = o;
  return fusion_plan(g, lo);
}

void Backend::run_passes(passes::LoweredGraph& l, std::span<const std::string> names,
                         const passes::LowerOptions& o, passes::PassLog& log) const {
  passes::run_passes(l, names, options(o), log,
                     [this](ir::Graph g, const passes::LowerOptions& mine, passes::PassLog& in) {
                       return recipe(std::move(g), mine, in);
                     });
}

}  // namespace lt::backends
