// The setting LT_DUMP_DIR: the traced IR of every graph prepared, and its Graphviz form. The
// lowering's own stages dump through passes::PassLog under the same directory and prefix.
#pragma once
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace lt::lazy {

/// The dump directory, or empty when dumps are off.
std::string dump_dir();
/// <dir>/<seq>-<key>.traced.ir and .dot for the seq-th graph prepared.
void dump_traced(const ir::Graph& g, uint64_t key, int64_t seq);

}  // namespace lt::lazy
