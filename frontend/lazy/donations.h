// Which references to a donated parameter buffer die with a step, so that rt::Executable::run
// may write the step's result over it.
#pragma once
#include <vector>

#include "frontend/lazy/cut.h"

namespace lt::lazy {

/// Executable::run's `owned_refs` for the donated parameters: the references to each donated
/// buffer that die with this step, namely the cut's own entry, the inputs of the graph's nodes
/// that read it as device data and the results of materialized nodes they read it from. Any
/// other reference (a tensor, a detached alias, a node outside this graph) makes run() refuse the
/// donation. Only at mark_step: every pending tensor is then a target, so no node of this graph
/// is traced into a later graph; after a sync of some tensors, a node still pending elsewhere may
/// run again later and read the old data.
std::vector<long> owned_refs(const Cut& c);

}  // namespace lt::lazy
