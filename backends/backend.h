// A backend lowers and compiles traced graphs for one kind of device. It provides three things:
// its loop-kernel rules (ir::KernelRules: what its loop kernels take on, which the fuser, the
// plan verifiers and its codegen read), its recipe (the order in which it runs the registered
// stages of passes/stages.def), and its compile entry (a lowered graph and its plans -> the
// launches the runtime runs). The frontend, lt-opt, lt-ir and the tests lower and compile through
// one; the CPU's is backends::cpu() (backends/cpu/).
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "codegen/compile_options.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/kernel_rules.h"
#include "passes/lowered_graph.h"
#include "passes/pass_log.h"
#include "runtime/executable.h"

namespace lt::backends {

class Backend {
 public:
  virtual ~Backend() = default;

  /// What its loop kernels take on; rules().backend is its name.
  virtual const ir::KernelRules& rules() const = 0;
  std::string_view name() const { return rules().backend; }

  /// Its compile entry: `l` as lower() made it (both plans) -> launches over buffer slots, which
  /// the runtime runs. An lt::InternalError when a plan is missing.
  virtual std::shared_ptr<rt::Executable> compile(const passes::LoweredGraph& l,
                                                  const codegen::CompileOptions& o,
                                                  codegen::CompileStats* stats = nullptr) const = 0;

  // The lowering, through its recipe. Each call takes the settings (`o`), and runs the stages
  // under options(o): the caller never hands rules of its own to a backend's stages.

  /// `o` with this backend's rules: the options its stages run under, and the ones whose
  /// passes::options_key keys its compiled steps.
  passes::LowerOptions options(passes::LowerOptions o) const;
  /// The whole lowering, its recipe: the traced graph, verified first, to the optimized graph
  /// and both plans (lt-opt --passes=pipeline). An lt::Error when g is malformed on entry.
  passes::LoweredGraph lower(ir::Graph g, const passes::LowerOptions& o,
                             passes::PassLog& log) const;
  /// The kernel stages of lower() alone, in its order: `l` gets the fusion plan lower() would
  /// make of its graph.
  void plan_kernels(passes::LoweredGraph& l, const passes::LowerOptions& o,
                    passes::PassLog& log) const;
  /// plan_kernels on a bare graph, unlogged (lt-ir, tests).
  ir::FusionPlan fusion_plan(const ir::Graph& g, const passes::LowerOptions& o = {}) const;
  ir::FusionPlan fusion_plan(const ir::Graph& g, const passes::FuseOptions& o) const;
  /// Registered stages by name, in order ("pipeline" is lower() on the current graph). An
  /// unknown name is an lt::Error naming it.
  void run_passes(passes::LoweredGraph& l, std::span<const std::string> names,
                  const passes::LowerOptions& o, passes::PassLog& log) const;

 private:
  /// Its recipe: registered stages (passes::run_stage), in its order, on a traced graph, under
  /// `o`, whose rules are rules().
  virtual passes::LoweredGraph recipe(ir::Graph g, const passes::LowerOptions& o,
                                      passes::PassLog& log) const = 0;
  /// The kernel stages of its recipe alone: fuse and the stages that refine its plan.
  virtual void kernel_recipe(passes::LoweredGraph& l, const passes::LowerOptions& o,
                             passes::PassLog& log) const = 0;
};

}  // namespace lt::backends
