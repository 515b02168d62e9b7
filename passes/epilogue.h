// Epilogues: a loop kernel that is the only reader of a matmul's or conv2d's output runs as that
// library call's epilogue (ir::KernelKind::Epilogue), on blocks of the output as they are made.
#pragma once
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/kernel_rules.h"

namespace lt::passes {

/// Merges each Library group of a node that takes an epilogue (rules.takes_epilogue) with the
/// Loop group that reads its output, where that loop group is the output's only reader (a graph
/// result may also be returned), has the output's shape, ends in no reduction and reads the
/// output element by element only (not through a view). The merged group runs where the library
/// group ran when all the loop reads is ready there and no group in between reads a parameter
/// the loop reads (a donated one may be written over), else where the loop group ran; inputs
/// and outputs are refilled. Returns the number of epilogues formed.
int attach_epilogues(const ir::Graph& g, const ir::KernelRules& rules, ir::FusionPlan& plan);

}  // namespace lt::passes
