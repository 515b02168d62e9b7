// Tensor comparison for tests: same type, and |a - b| <= atol + rtol * |b| elementwise.
#pragma once
#include <gtest/gtest.h>

#include "lt/lt.h"

namespace lt::testing {

::testing::AssertionResult AllClose(const Tensor& actual, const Tensor& expected, double atol = 1e-5,
                                    double rtol = 1e-5);

}  // namespace lt::testing
