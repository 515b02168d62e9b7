// Counters and timings of the lazy runtime: the setting LT_METRICS=1 prints report() at exit.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace lt::metrics {

/// A counter's value ("mark_step", "cache_hit", "cache_miss", "sync", "nodes_traced", ...);
/// 0 when it never counted.
int64_t counter(std::string_view name);
/// Every counter and timing, one per line.
std::string report();
/// Zeroes everything (tests).
void reset();

// Recording (used by the runtime).
void count(std::string_view name, int64_t n = 1);
void time_ns(std::string_view name, int64_t ns);

}  // namespace lt::metrics
