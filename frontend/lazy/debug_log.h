// The setting LT_DEBUG: one line per graph run and per recompile, on stderr and kept for
// debug::take_log().
#pragma once
#include <cstdint>
#include <string>

namespace lt::lazy {

bool debug_enabled();
/// Prints the line to stderr and keeps it for debug::take_log().
void debug_line(std::string line);
/// A graph was compiled whose run can hold `bytes` at once (lt::debug::planned_peak_bytes).
void note_planned_peak(int64_t bytes);

}  // namespace lt::lazy
