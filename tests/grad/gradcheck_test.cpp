// Table-driven gradcheck: for every differentiable op and each of its samples, the autograd
// gradient of sum_k <op(inputs)[k], c_k> (random cotangents c_k) equals central differences in f64,
// for every differentiable input. Ops come from the table, so a new Diff row is checked (or
// flagged by EveryDifferentiableOpHasSamples) without touching this file.
#include <gtest/gtest.h>

#include <string>

#include "ir/op.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"
#include "tests/support/central_difference.h"
#include "tests/support/op_samples.h"
#include "tests/support/op_samples_builders.h"

namespace lt {
namespace {

using testing::OpSample;

std::vector<ir::Op> differentiable_ops() {
  std::vector<ir::Op> ops;
  for (ir::Op op : ir::all_ops())
    if (ir::info(op).differentiable) ops.push_back(op);
  return ops;
}

/// A random cotangent of t's type: U[-1,1) for floats, small integers for integer outputs.
Tensor cotangent(const Tensor& t, testing::samples::Rng& r) {
  std::vector<double> v(t.numel());
  for (double& x : v)
    x = is_float(t.dtype()) ? r.uniform(-1, 1) : static_cast<double>(r.below(7) - 3);
  Tensor c = from_vector<double>(v, t.shape());
  return t.dtype() == DType::F64 ? c : cast(c, t.dtype());
}

/// loss(plus) - loss(minus) with loss(outs) = sum_k <outs[k], cots[k]>, on the host in double.
/// Summing the differences term by term leaves out every output the step did not change, so
/// large outputs add no rounding noise to the difference quotient.
double loss_diff(const std::vector<Tensor>& plus, const std::vector<Tensor>& minus,
                 const std::vector<Tensor>& cots) {
  double d = 0;
  for (size_t k = 0; k < cots.size(); ++k) {
    const auto p = plus[k].to_vector<double>(), m = minus[k].to_vector<double>();
    const auto c = cots[k].to_vector<double>();
    for (size_t j = 0; j < c.size(); ++j) d += (p[j] - m[j]) * c[j];
  }
  return d;
}

/// Elements whose gradient is checked: all of a small input; of a large one (samples that reach
/// the kernels' threaded and tiled paths) the first and last 16 and 32 in between, so the cost
/// stays a few hundred forward runs per input.
std::vector<int64_t> checked_elements(int64_t n, testing::samples::Rng& r) {
  constexpr int64_t kAll = 256, kEnds = 16, kMiddle = 32;
  std::vector<int64_t> idx;
  if (n <= kAll) {
    for (int64_t j = 0; j < n; ++j) idx.push_back(j);
    return idx;
  }
  for (int64_t j = 0; j < kEnds; ++j) idx.push_back(j);
  for (int64_t j = 0; j < kMiddle; ++j) idx.push_back(kEnds + r.below(n - 2 * kEnds));
  for (int64_t j = n - kEnds; j < n; ++j) idx.push_back(j);
  return idx;
}

/// Central differences of loss() with respect to input i at the elements `idx`; every other
/// element is copied from `analytic`, so a comparison sees only the checked ones.
Tensor numeric_grad(const OpSample& s, const std::vector<Tensor>& cots, size_t i,
                    const std::vector<int64_t>& idx, const Tensor& analytic) {
  NoGradGuard no_grad;
  std::vector<Tensor> in = s.inputs;
  std::vector<double> g = analytic.to_vector<double>();
  const std::vector<double> numeric = testing::central_differences(
      [&](const std::vector<double>& y) {
        in[i] = from_vector<double>(y, s.inputs[i].shape());
        return testing::run_sample(s, in);
      },
      in[i].to_vector<double>(), {.eps = s.eps}, idx,
      [&](const std::vector<Tensor>& plus, const std::vector<Tensor>& minus) {
        return loss_diff(plus, minus, cots);
      });
  for (size_t k = 0; k < idx.size(); ++k) g[idx[k]] = numeric[k];
  return from_vector<double>(g, s.inputs[i].shape());
}

void check_sample(const OpSample& s, uint64_t seed) {
  SCOPED_TRACE(s.label());
  testing::samples::Rng r(seed);
  // Fresh leaves, so the sample's own tensors never carry .grad between runs.
  std::vector<Tensor> leaves;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    Tensor t = s.inputs[i];
    if (s.differentiable[i]) {
      ASSERT_EQ(t.dtype(), DType::F64) << "gradcheck perturbs f64 inputs only";
      t = from_vector<double>(t.to_vector<double>(), t.shape()).requires_grad_();
    }
    leaves.push_back(t);
  }
  const std::vector<Tensor> outs = testing::run_sample(s, leaves);
  ASSERT_LE(static_cast<size_t>(s.grad_outputs), outs.size());
  std::vector<Tensor> cots;
  for (int k = 0; k < s.grad_outputs; ++k) cots.push_back(cotangent(outs[k], r));
  for (int k = 0; k < s.grad_outputs; ++k)
    ASSERT_TRUE(outs[k].requires_grad()) << "output " << k << " has no autograd history";
  if (s.grad_outputs == 1) {
    outs[0].backward(cots[0]);  // exact: no extra ops between the op and its vjp
  } else {                      // one backward (it frees the graph): the sum of the seeded outputs
    Tensor total = sum(outs[0] * cots[0]);
    for (int k = 1; k < s.grad_outputs; ++k) total = total + sum(outs[k] * cots[k]);
    total.backward();
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!s.differentiable[i]) continue;
    SCOPED_TRACE("input " + std::to_string(i) + " " + type_str(leaves[i].type()));
    Tensor analytic = leaves[i].grad();
    if (!analytic.defined()) analytic = zeros_like(leaves[i]);  // no gradient flowed: zero
    EXPECT_EQ(analytic.dtype(), leaves[i].dtype()) << "gradient dtype";
    const std::vector<int64_t> idx = checked_elements(leaves[i].numel(), r);
    EXPECT_TRUE(
        testing::AllClose(analytic, numeric_grad(s, cots, i, idx, analytic), s.atol, s.rtol))
        << "autograd (actual) vs central differences (expected)";
  }
}

class OpGradCheck : public ::testing::TestWithParam<ir::Op> {};

TEST_P(OpGradCheck, MatchesCentralDifferences) {
  const std::vector<OpSample> samples = testing::samples_for(GetParam());
  for (size_t n = 0; n < samples.size(); ++n)
    if (samples[n].any_differentiable()) check_sample(samples[n], 1000 + n);
}

INSTANTIATE_TEST_SUITE_P(Table, OpGradCheck, ::testing::ValuesIn(differentiable_ops()),
                         [](const ::testing::TestParamInfo<ir::Op>& p) {
                           return std::string(ir::info(p.param).name);
                         });

TEST(GradCheck, EveryDifferentiableOpHasSamples) {
  for (ir::Op op : differentiable_ops()) {
    bool any = false;
    for (const OpSample& s : testing::samples_for(op)) any = any || s.any_differentiable();
    EXPECT_TRUE(any) << ir::mnemonic(op) << " is Diff in the table but has no sample with a "
                     << "differentiable input (tests/support/op_samples*.cpp)";
  }
}

/// Every float input position of a differentiable op is perturbed by at least one sample.
TEST(GradCheck, EveryFloatInputIsChecked) {
  for (ir::Op op : differentiable_ops()) {
    std::vector<bool> is_float_at, checked;
    for (const OpSample& s : testing::samples_for(op)) {
      is_float_at.resize(std::max(is_float_at.size(), s.inputs.size()));
      checked.resize(is_float_at.size());
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        if (is_float(s.inputs[i].dtype())) is_float_at[i] = true;
        if (s.differentiable[i]) checked[i] = true;
      }
    }
    for (size_t i = 0; i < is_float_at.size(); ++i)
      EXPECT_TRUE(!is_float_at[i] || checked[i]) << ir::mnemonic(op) << " input " << i;
  }
}

}  // namespace
}  // namespace lt
