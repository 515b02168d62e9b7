// Common-subexpression elimination.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Merges nodes with equal op, attributes (doubles compared bit for bit, so 0.0 and -0.0 stay
/// apart) and inputs into the first of them; the later ones are dropped and their uses go to the
/// first. Every op is pure today; random ops take their key and counter as inputs, so equal inputs
/// mean equal draws and they merge too. Parameters are never merged, even when they hold equal
/// values: they may hold different data next step, and merging them would change the graph's
/// parameters, so its cache key. Parameters, results and donations are kept. Returns true if the
/// graph changed.
bool cse(ir::Graph& g);

}  // namespace lt::passes
