// Replicas must run the same step graphs: every collective in a graph waits for the same
// collective on every other rank. A newly traced graph with collectives is checked against the
// other ranks' before it is prepared (one small all_gather per new graph, nothing per step).
#pragma once
#include <cstdint>
#include <memory>

#include "frontend/lazy/prepared_step.h"
#include "ir/graph.h"

namespace lt::lazy {

/// How long a rank waits for the others to reach the same check before it gives up.
inline constexpr double kAgreementTimeoutSeconds = 120;

/// In a job of more than one rank, when `g` has a collective op: checks that every rank traced
/// a graph of structural hash `hash`, and returns true (every rank prepares `g` now). Throws
/// lt::Error on every rank when they differ (naming the ranks, both hashes and the first
/// differing line of the IR), or when some rank does not reach the check within
/// kAgreementTimeoutSeconds (it runs another step). False: nothing was checked (one rank, or a
/// graph without collectives, which a rank may run alone).
bool check_graph_agreement(const ir::Graph& g, uint64_t hash);

/// How long ranks wait for their host's compiling rank.
inline constexpr double kSharedCompileTimeoutSeconds = 600;

/// Prepares a graph every rank prepares at once (check_graph_agreement returned true): with the
/// disk cache on, local rank 0 of each host compiles it and writes the objects there, and the
/// other ranks of the host wait for it and load them, so a host spends LLVM time once, not once
/// per rank. A failure to prepare on any rank is an lt::Error on every rank.
std::shared_ptr<PreparedStep> prepare_on_every_rank(ir::Graph g, const CompileOptions& o,
                                                    uint64_t key);

}  // namespace lt::lazy
