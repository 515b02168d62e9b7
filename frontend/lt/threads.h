// The runtime's thread count: the setting LT_NUM_THREADS (default every core).
#pragma once

namespace lt {

int num_threads();
/// Overrides LT_NUM_THREADS (from 1 to 1024, else lt::InputError); benchmarks compare 1 vs 2.
void set_num_threads(int n);

}  // namespace lt
