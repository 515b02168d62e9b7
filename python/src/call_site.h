// The location the bindings pass to the C++ API. std::source_location cannot be made from a
// Python file and line, so every binding passes this one, and the exception translator
// (errors.cpp) replaces its text in a message with the Python caller's file:line.
#pragma once
#include "lt/tensor.h"

#include <string>

namespace lt::py {

const Loc& call_site();
/// call_site() as error messages spell it (location_str: "call_site.cpp:12").
const std::string& call_site_text();

}  // namespace lt::py
