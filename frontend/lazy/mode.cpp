// Which mode ops run in: eager (at once) or lazy (traced until mark_step).
#include <atomic>

#include "frontend/lazy/tracer.h"
#include "lt/lazy.h"
#include "lt/options.h"

namespace lt {
namespace {
std::atomic<Mode> g_mode{Mode::Eager};
}  // namespace

Mode mode() { return g_mode.load(); }
void set_mode(Mode m) {
  init();  // the settings are read before anything is traced
  g_mode.store(m);
}

namespace lazy {
bool tracing() { return g_mode.load(std::memory_order_relaxed) == Mode::Lazy; }
}  // namespace lazy

}  // namespace lt
