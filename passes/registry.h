// The only list of pass names: lt-opt --passes=..., dump file names and docs read it.
#pragma once
#include <span>
#include <string_view>

#include "ir/graph.h"

namespace lt::passes {

struct PassEntry {
  std::string_view name;
  bool (*run)(ir::Graph&);  // returns whether the graph changed
  std::string_view summary;
};

std::span<const PassEntry> all_passes();
/// Null when no pass has that name.
const PassEntry* find_pass(std::string_view name);

}  // namespace lt::passes
