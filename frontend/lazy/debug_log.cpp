#include "frontend/lazy/debug_log.h"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>
#include <vector>

#include "frontend/options/store.h"
#include "lt/lazy.h"

namespace lt {
namespace {

struct DebugLines {
  std::mutex mu;
  std::vector<std::string> lines;
};
std::atomic<int64_t> largest_planned_peak{0};
DebugLines& lines() {
  static DebugLines l;
  return l;
}

}  // namespace

namespace lazy {

bool debug_enabled() { return options::enabled(options::Setting::Debug); }

void debug_line(std::string line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  DebugLines& l = lines();
  std::lock_guard lock(l.mu);
  l.lines.push_back(std::move(line));
}

void note_planned_peak(int64_t bytes) {
  int64_t seen = largest_planned_peak.load();
  while (bytes > seen && !largest_planned_peak.compare_exchange_weak(seen, bytes)) {
  }
}

}  // namespace lazy

namespace debug {
void set_enabled(bool on) { options::set_number(options::Setting::Debug, on); }
std::vector<std::string> take_log() {
  DebugLines& l = lines();
  std::lock_guard lock(l.mu);
  return std::exchange(l.lines, {});
}
int64_t planned_peak_bytes() { return largest_planned_peak.load(); }
}  // namespace debug

}  // namespace lt
