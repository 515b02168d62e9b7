#include "tests/support/all_close.h"

#include <cmath>

namespace lt::testing {

::testing::AssertionResult AllClose(const Tensor& actual, const Tensor& expected, double atol,
                                    double rtol) {
  if (actual.shape() != expected.shape())
    return ::testing::AssertionFailure()
           << "shape " << type_str(actual.type()) << " vs expected " << type_str(expected.type());
  const auto a = actual.to_vector<double>();
  const auto b = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]));  // inf too
    if (!same && !(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i])))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected "
                                           << b[i] << " (atol " << atol << ", rtol " << rtol << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace lt::testing
