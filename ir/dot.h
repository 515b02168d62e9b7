// Graphviz form of a graph: parameters as ellipses, nodes as boxes labelled with op and type,
// results marked. `lt-ir` renders it to SVG; fusion will add clusters.
#pragma once
#include <string>

#include "ir/graph.h"

namespace lt::ir {

std::string to_dot(const Graph& g);

}  // namespace lt::ir
