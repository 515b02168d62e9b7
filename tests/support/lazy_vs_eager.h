// One check that tests of composed user functions share: a call traced in lazy mode and run by
// one mark_step gives what it gives eagerly, at every opt level.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt::testing {

/// A user function over some inputs, with a name for failure messages. Its float inputs are f64
/// (the checks cast them to f32 too); integer and bool inputs are used as given.
struct TracedCall {
  std::string name;
  std::vector<Tensor> inputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f;
};

/// Each call, with its float inputs in f64 and then cast to f32, traced lazily and run by one
/// mark_step at opt levels 0, 1 and 2 against the same call run eagerly: bit for bit at level 0
/// (the interpreter runs the eager kernels), within `f64_tol` / `f32_tol` (relative and
/// absolute; 0 asks for the same bits) at levels 1 and 2. The compile options are restored
/// afterwards.
void expect_lazy_matches_eager(std::span<const TracedCall> calls, double f64_tol,
                               double f32_tol);

}  // namespace lt::testing
