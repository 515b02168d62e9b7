#include "tests/support/gradcheck_calls.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/central_difference.h"
#include "tests/support/op_samples_builders.h"

namespace lt::testing {
namespace {

using Outs = std::vector<Tensor>;

Tensor cotangent(const Tensor& t, samples::Rng& r) {
  std::vector<double> v(t.numel());
  for (double& x : v) x = r.uniform(-1, 1);
  return from_vector<double>(v, t.shape());
}

/// sum_k <outs[k], cots[k]> over the float outputs.
double loss(const Outs& outs, const Outs& cots) {
  double l = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!cots[k].defined()) continue;
    const auto y = outs[k].to_vector<double>(), w = cots[k].to_vector<double>();
    for (size_t i = 0; i < y.size(); ++i) l += y[i] * w[i];
  }
  return l;
}

}  // namespace

void expect_gradients_match_central_differences(std::span<const TracedCall> calls) {
  for (const TracedCall& c : calls) {
    SCOPED_TRACE(c.name);
    samples::Rng r(7);
    std::vector<Tensor> leaves;
    for (const Tensor& t : c.inputs)
      leaves.push_back(t.dtype() == DType::F64 ? t.detach().requires_grad_() : t);
    const Outs y = c.f(leaves);
    Outs cots;
    Tensor total;
    for (const Tensor& out : y) {
      cots.push_back(out.dtype() == DType::F64 ? cotangent(out, r) : Tensor());
      if (!cots.back().defined()) continue;
      const Tensor term = sum(out * cots.back());
      total = total.defined() ? total + term : term;
    }
    if (!total.defined()) continue;  // indices only (argsort): nothing to differentiate
    total.backward();
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (leaves[i].dtype() != DType::F64) continue;
      SCOPED_TRACE("input " + std::to_string(i));
      const std::vector<double> want = central_differences(
          [&](const std::vector<double>& xs) {
            NoGradGuard no_grad;
            std::vector<Tensor> in = c.inputs;
            in[i] = from_vector<double>(xs, c.inputs[i].shape());
            return loss(c.f(in), cots);
          },
          c.inputs[i].to_vector<double>(), {.eps = 1e-6});
      const Tensor got = leaves[i].grad().defined() ? leaves[i].grad() : zeros_like(leaves[i]);
      EXPECT_TRUE(AllClose(got, from_vector<double>(want, c.inputs[i].shape()), 1e-6, 1e-5));
    }
  }
}

}  // namespace lt::testing
