// PassLog runs the lowering's stages one by one: it times each, re-verifies the graph and the
// plans after each when asked, and dumps what each stage made when given a directory. It reads
// no environment variables: the frontend turns its options into PassLogOptions.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "passes/registry.h"

namespace lt::passes {

struct PassLogOptions {
  bool verify = false;           ///< verify the graph and plans after every stage
  std::string dump_dir;          ///< non-empty: one file per stage, see dump()
  std::string prefix = "graph";  ///< dump file prefix, such as the graph's hash
};

/// One stage as it ran.
struct PassRecord {
  std::string name;     ///< registry name
  int64_t ns = 0;       ///< wall time of the stage alone (not the verify or the dump)
  bool changed = false;
  int64_t nodes = 0;    ///< node count after the stage
};

class PassLog {
 public:
  explicit PassLog(PassLogOptions opt = {}) : opt_(std::move(opt)) {}

  /// Verifies g (always; throws lt::Error naming the first malformed node), records it as the
  /// pass "verify" and dumps g in full: the lowering's input.
  void verify(const ir::Graph& g);
  /// Runs a registered stage (not Pipeline: a backend's recipe). Returns whether it changed the
  /// graph or made a plan. A stage that leaves a malformed graph or plan is an InternalError
  /// when verifying; lt::Error from the stage itself (bad input) passes through.
  bool run(LoweredGraph& l, const PassEntry& stage, const LowerOptions& o);
  /// Runs a registered graph rewrite on a bare graph (an unregistered one is an InternalError).
  bool run(ir::Graph& g, PassFn pass);
  /// Runs `pass` under `name`, for rewrites outside the registry (tests, experiments).
  bool run(std::string_view name, ir::Graph& g, const std::function<bool(ir::Graph&)>& pass);

  /// Every stage run so far, in order (for metrics).
  std::span<const PassRecord> records() const { return records_; }
  int64_t total_ns() const;
  /// Whether any stage changed the graph or made a plan.
  bool changed() const;

 private:
  /// `rules`: what the plans were made under (the lowering options'), for their verifiers.
  bool record(std::string_view name, StageKind kind, int64_t t0, bool changed, const ir::Graph& g,
              const ir::FusionPlan* fusion, const ir::BufferPlan* buffers,
              const ir::KernelRules* rules);
  /// <dump_dir>/<prefix>-NN-<name>.ir with the graph (or "(unchanged)"), or .txt with the plan
  /// a planning stage made.
  void dump(std::string_view name, StageKind kind, bool changed, const ir::Graph& g,
            const ir::FusionPlan* fusion, const ir::BufferPlan* buffers);

  PassLogOptions opt_;
  std::vector<PassRecord> records_;
};

}  // namespace lt::passes
