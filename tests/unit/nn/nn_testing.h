// What the lt::nn tests share: host copies of values, writing values into a module's tensors,
// error text, and central differences in f64 for the gradient of a module's parameters.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/nn.h"
#include "tests/support/central_difference.h"
#include "tests/support/error_of.h"

namespace lt::testing {

/// The values of t as doubles, whatever its dtype.
inline std::vector<double> values(const Tensor& t) {
  return t.dtype() == DType::F64 ? t.to_vector<double>() : cast(t, DType::F64).to_vector<double>();
}

/// Writes v into t in place (cast to t's dtype): every handle of t, the module's included, sees it.
inline void set_values(Tensor t, const std::vector<double>& v) {
  NoGradGuard no_grad;
  t.copy_(from_vector<double>(v, t.shape()));
}

/// The values of every tensor of a state dict, by name (exact: f32 and i64 fit in a double).
inline std::map<std::string, std::vector<double>> snapshot(const TensorDict& state) {
  std::map<std::string, std::vector<double>> out;
  for (const auto& [name, t] : state) out[name] = values(t);
  return out;
}

/// Checks d(sum(f() * c))/dp for every parameter p of m (f64) against central differences, at
/// every element of small parameters and at `per_param` spread ones of larger.
inline void expect_gradients_match(nn::Module& m, const std::function<Tensor()>& f,
                                   double tol = 1e-6, int64_t per_param = 24) {
  manual_seed(1234);
  const Tensor out = f();
  ASSERT_EQ(out.dtype(), DType::F64);
  const Tensor c = randn(out.shape(), DType::F64);
  auto loss = [&] {
    NoGradGuard no_grad;
    return sum(mul(f(), c)).item<double>();
  };
  m.zero_grad();
  sum(mul(f(), c)).backward();
  for (const auto& [name, p] : m.named_parameters()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(p.grad().defined());
    const std::vector<double> g = values(p.grad()), x = values(p);
    const int64_t n = static_cast<int64_t>(x.size());
    const int64_t step = n <= per_param ? 1 : n / per_param;
    std::vector<int64_t> elements;
    for (int64_t j = 0; j < n; j += step) elements.push_back(j);
    const std::vector<double> numeric = central_differences(
        [&](const std::vector<double>& y) {
          set_values(p, y);
          return loss();
        },
        x, {.eps = 1e-6, .relative = true}, elements);
    set_values(p, x);
    for (size_t k = 0; k < elements.size(); ++k) {
      const int64_t j = elements[k];
      EXPECT_NEAR(g[j], numeric[k], tol * std::max(1.0, std::abs(numeric[k]))) << "element " << j;
    }
  }
}

}  // namespace lt::testing
