// The runtime's thread count (LT_NUM_THREADS, default every core).
#pragma once

namespace lt {

int num_threads();
/// n >= 1; benchmarks compare 1 vs 2.
void set_num_threads(int n);

}  // namespace lt
