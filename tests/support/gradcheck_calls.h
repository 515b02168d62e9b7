// The gradient check that tests over tables of composed calls share: each call's autograd
// gradients against central differences in f64, with a random cotangent for every float output.
#pragma once
#include <span>

#include "tests/support/lazy_vs_eager.h"

namespace lt::testing {

/// For each call: sum_k <out_k, cot_k> over its float outputs (cot_k uniform in [-1, 1]) is
/// differentiated by backward() and by central differences (eps 1e-6) in every f64 input; the
/// two agree within 1e-6 relative and 1e-5 absolute. A call with no float output is skipped.
void expect_gradients_match_central_differences(std::span<const TracedCall> calls);

}  // namespace lt::testing
