// The lowering's stages (passes/stages.def, the only list of their names): lt-opt --passes=...,
// dump file names, metrics and docs read it. A stage is a graph rewrite, or a planning stage that
// makes or edits a plan. Code names a stage by its Stage enumerator, never by its string.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "ir/graph.h"
#include "passes/lowered_graph.h"

namespace lt::passes {

using PassFn = bool (*)(ir::Graph&);  // a graph rewrite; returns whether the graph changed
/// A stage on the lowered graph; returns whether it changed the graph or a plan.
using StageFn = bool (*)(LoweredGraph&, const LowerOptions&);

enum class StageKind : uint8_t {
  Graph,       ///< rewrites the graph (dropping plans made before it, if it changed anything)
  Fusion,      ///< makes the fusion plan
  FusionEdit,  ///< edits the fusion plan (needs one; drops the buffer plan if it changed it)
  Buffers,     ///< makes the buffer plan (needs the fusion plan)
  Pipeline,    ///< the whole lowering, in order: a backend's recipe (backends/)
};

enum class Stage : uint8_t {
#define LT_STAGE(id, ...) id,
#include "passes/stages.def"
#undef LT_STAGE
};

struct PassEntry {
  std::string_view name;
  StageKind kind;
  StageFn run;     ///< null for Pipeline, which runs the other stages through the log
  PassFn rewrite;  ///< Graph stages: the rewrite itself; null otherwise
  std::string_view summary;
};

/// Every stage, in stages.def order.
std::span<const PassEntry> all_passes();
const PassEntry& entry(Stage s);
/// Null when no stage has that name.
const PassEntry* find_pass(std::string_view name);
/// The entry of a registered graph rewrite (PassLog names passes this way); null if none.
const PassEntry* find_pass(PassFn fn);

}  // namespace lt::passes
