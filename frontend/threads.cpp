#include "lt/threads.h"

#include "runtime/thread_pool.h"

namespace lt {

int num_threads() { return rt::num_threads(); }
void set_num_threads(int n) { rt::set_num_threads(n); }

}  // namespace lt
