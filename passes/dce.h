// Dead-code elimination.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Drops nodes no result depends on (every op is pure). Parameters stay, so the graph's signature
/// does not change. Returns true if the graph changed.
bool dce(ir::Graph& g);

}  // namespace lt::passes
