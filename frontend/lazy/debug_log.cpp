#include "frontend/lazy/debug_log.h"

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

}  // namespace lazy

namespace debug {
void set_enabled(bool on) { options::set_number(options::Setting::Debug, on); }
std::vector<std::string> take_log() {
  DebugLines& l = lines();
  std::lock_guard lock(l.mu);
  return std::exchange(l.lines, {});
}
}  // namespace debug

}  // namespace lt
