// Graphviz form of a graph: parameters as ellipses, nodes as boxes labelled with op and type,
// results as double octagons. Given a fusion plan, each kernel is drawn as a cluster around its
// nodes. `lt-ir` writes it (and renders SVG); LT_DUMP_DIR writes one per prepared graph.
#pragma once
#include <string>

#include "ir/fusion_plan.h"
#include "ir/graph.h"

namespace lt::ir {

std::string to_dot(const Graph& g);

/// The same drawing with each group of `plan` (a fusion plan of g) as a cluster `cluster_K`,
/// labelled with its number (as in print_fusion_plan), its kind and its iteration shape or op:
/// "kernel 0 loop [8,32]", "kernel 1 matmul+loop [8,16]", "kernel 2 library conv2d". Loop
/// kernels are filled blue, epilogue kernels orange, library calls grey. Nodes in no group are
/// drawn outside every cluster; a node id outside g is an lt::InternalError (verify_fusion_plan
/// checks the rest).
std::string to_dot(const Graph& g, const FusionPlan& plan);

}  // namespace lt::ir
