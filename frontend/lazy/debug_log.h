// The setting LT_DEBUG: one line per graph run and per recompile, on stderr and kept for
// debug::take_log().
#pragma once
#include <string>

namespace lt::lazy {

bool debug_enabled();
/// Prints the line to stderr and keeps it for debug::take_log().
void debug_line(std::string line);

}  // namespace lt::lazy
