// The only list of pass names: lt-opt --passes=..., dump file names, metrics and docs read it.
// A pass is a stage of the lowering: a graph rewrite, or a planning stage that adds a plan.
#pragma once
#include <span>
#include <string_view>

#include "ir/graph.h"
#include "passes/lowered_graph.h"

namespace lt::passes {

using PassFn = bool (*)(ir::Graph&);  // a graph rewrite; returns whether the graph changed
/// A stage on the lowered graph; returns whether it changed the graph or made a plan.
using StageFn = bool (*)(LoweredGraph&, const LowerOptions&);

enum class StageKind : uint8_t {
  Graph,     ///< rewrites the graph (dropping plans made before it, if it changed anything)
  Fusion,    ///< makes the fusion plan
  Buffers,   ///< makes the buffer plan (needs the fusion plan)
  Pipeline,  ///< the whole lowering, in order (passes::lower)
};

struct PassEntry {
  std::string_view name;
  StageKind kind;
  StageFn run;     ///< null for Pipeline, which runs the other stages through the log
  PassFn rewrite;  ///< Graph stages: the rewrite itself; null otherwise
  std::string_view summary;
};

std::span<const PassEntry> all_passes();
/// Null when no pass has that name.
const PassEntry* find_pass(std::string_view name);
/// The entry of a registered graph rewrite (PassLog names passes this way); null if none.
const PassEntry* find_pass(PassFn fn);

}  // namespace lt::passes
