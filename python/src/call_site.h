// The location the bindings pass to the C++ API. std::source_location cannot be made from a
// Python file and line, so every binding passes this one; the C++ side names the Python caller
// in its place (ir/location_namer.h) inside the calls that read values (their sync reasons)
// and everywhere while debugging is on (the traced nodes, for recompile causes), and the
// exception translator (errors.cpp) replaces what is left of its text in a message.
#pragma once
#include "lt/tensor.h"

#include <string>

namespace lt::py {

const Loc& call_site();
/// call_site() as the C++ side spells it without a namer ("call_site.cpp:12").
const std::string& call_site_text();
/// The user's Python file:line: the innermost frame outside the package (needs the GIL).
std::string python_caller();

/// Registers the namer of call_site(): it gives the Python caller inside a CallerNamed scope,
/// and always while name_every_call(true) holds.
void register_caller_namer();
void name_every_call(bool on);

/// For the bindings that read values (item, numpy, str, mark_step, backward): while it lives,
/// call_site() is this thread's Python caller, found once when it is made (with the GIL held),
/// so that the syncs it causes name the user's line even after the GIL is released.
class CallerNamed {
 public:
  CallerNamed();
  ~CallerNamed();
  CallerNamed(const CallerNamed&) = delete;
  CallerNamed& operator=(const CallerNamed&) = delete;

 private:
  std::string previous_;
};

}  // namespace lt::py
