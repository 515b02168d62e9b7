// Tensor comparison for tests: same shape, and elementwise equal (NaN with NaN, an inf with the
// same inf) or |a - b| <= atol + rtol * |b|.
#pragma once
#include <gtest/gtest.h>

#include "lt/lt.h"

namespace lt::testing {

::testing::AssertionResult AllClose(const Tensor& actual, const Tensor& expected, double atol = 1e-5,
                                    double rtol = 1e-5);

}  // namespace lt::testing
