// Parser for the IR text form (docs/IR.md), the inverse of print(). It checks syntax and resolves
// names only; callers run verify() to check the stored types against the op rules.
#pragma once
#include <string_view>

#include "ir/graph.h"

namespace lt::ir {

/// Parses one graph (comments `// ...` and any whitespace allowed). Output types come from the
/// text. Throws lt::Error "line L, column C: <what>, got '<token>'" (1-based) on malformed text.
Graph parse(std::string_view text);

}  // namespace lt::ir
