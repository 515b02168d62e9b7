// The only list of pass names: lt-opt --passes=..., dump file names and docs read it.
#pragma once
#include <span>
#include <string_view>

#include "ir/graph.h"

namespace lt::passes {

using PassFn = bool (*)(ir::Graph&);  // returns whether the graph changed

struct PassEntry {
  std::string_view name;
  PassFn run;
  std::string_view summary;
};

std::span<const PassEntry> all_passes();
/// Null when no pass has that name.
const PassEntry* find_pass(std::string_view name);
/// The entry of a registered pass function (PassLog names passes this way); null if none.
const PassEntry* find_pass(PassFn fn);

}  // namespace lt::passes
