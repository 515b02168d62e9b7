#include "lt/threads.h"

#include "frontend/options/store.h"
#include "lt/options.h"
#include "runtime/thread_pool.h"

namespace lt {

int num_threads() {
  init();
  return rt::num_threads();
}
void set_num_threads(int n) { options::set_number(options::Setting::NumThreads, n); }

}  // namespace lt
