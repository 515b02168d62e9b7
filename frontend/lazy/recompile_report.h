// "Why did it recompile?": the first place where a new graph differs from the nearest cached one.
#pragma once
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lt::lazy {

/// One line naming the first difference between `g` and whichever of `cached` shares the longest
/// prefix with it (parameter types first, then nodes), as IR text with the traced source location;
/// empty when `cached` is empty.
std::string explain_difference(const ir::Graph& g, const std::vector<const ir::Graph*>& cached);

}  // namespace lt::lazy
