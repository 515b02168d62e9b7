// Replicas must run the same step graphs: every collective in a graph waits for the same
// collective on every other rank. A newly traced graph with collectives is checked against the
// other ranks' before it is prepared (one small all_gather per new graph, nothing per step).
#pragma once
#include <cstdint>

#include "ir/graph.h"

namespace lt::lazy {

/// How long a rank waits for the others to reach the same check before it gives up.
inline constexpr double kAgreementTimeoutSeconds = 120;

/// In a job of more than one rank, when `g` has a collective op: checks that every rank traced
/// a graph of structural hash `hash`. Throws lt::Error on every rank when they differ (naming
/// the ranks, both hashes and the first differing line of the IR), or when some rank does not
/// reach the check within kAgreementTimeoutSeconds (it runs another step).
void check_graph_agreement(const ir::Graph& g, uint64_t hash);

}  // namespace lt::lazy
