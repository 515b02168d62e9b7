#include "frontend/lazy/debug_log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "lt/lazy.h"

namespace lt {
namespace {

std::atomic<bool>& enabled() {
  static std::atomic<bool> on{[] {
    const char* s = std::getenv("LT_DEBUG");
    return s && *s && std::atoll(s) != 0;
  }()};
  return on;
}

struct DebugLines {
  std::mutex mu;
  std::vector<std::string> lines;
};
DebugLines& lines() {
  static DebugLines l;
  return l;
}

}  // namespace

namespace lazy {

bool debug_enabled() { return enabled().load(std::memory_order_relaxed); }

void debug_line(std::string line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  DebugLines& l = lines();
  std::lock_guard lock(l.mu);
  l.lines.push_back(std::move(line));
}

}  // namespace lazy

namespace debug {
void set_enabled(bool on) { enabled() = on; }
std::vector<std::string> take_log() {
  DebugLines& l = lines();
  std::lock_guard lock(l.mu);
  return std::exchange(l.lines, {});
}
}  // namespace debug

}  // namespace lt
