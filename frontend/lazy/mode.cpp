// Which mode ops run in: eager (at once) or lazy (traced until mark_step).
#include <atomic>

#include "ir/error.h"

#include "frontend/lazy/tracer.h"
#include "lt/lazy.h"
#include "lt/options.h"

namespace lt {
namespace {
std::atomic<Mode> g_mode{Mode::Eager};
thread_local bool t_eager = false;
}  // namespace

Mode mode() { return t_eager ? Mode::Eager : g_mode.load(); }
void set_mode(Mode m) {
  init();  // the settings are read before anything is traced
  // A loader worker's mode switches stay its own: they must not change the stepping thread's.
  if (t_eager) {
    if (m == Mode::Lazy)
      throw Error("set_mode: a data loader worker runs eagerly; lazy mode is the stepping "
                  "thread's");
    return;
  }
  g_mode.store(m);
}

namespace lazy {
bool tracing() { return !t_eager && g_mode.load(std::memory_order_relaxed) == Mode::Lazy; }
void set_eager_thread(bool on) { t_eager = on; }
}  // namespace lazy

}  // namespace lt
