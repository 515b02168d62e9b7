// Every op of the tables, through its samples, in f64 and f32: the lazy result equals the eager
// one. At opt level 0 (the reference interpreter: the same kernels on 64-byte-aligned buffers)
// exactly; compiled (levels 1 and 2: passes, fusion, LLVM loop kernels whose libm/LLVM math
// differs from Eigen's in the last bits, convolutions on another layout) to a few ulps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/parser.h"
#include "lt/lazy.h"
#include "tests/support/all_close.h"
#include "tests/support/op_samples.h"

namespace lt {
namespace {

using testing::OpSample;

::testing::AssertionResult SameValues(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type())
    return ::testing::AssertionFailure() << type_str(a.type()) << " vs " << type_str(b.type());
  const auto x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i)
    if (!(x[i] == y[i] || (std::isnan(x[i]) && std::isnan(y[i]))))
      return ::testing::AssertionFailure() << "element " << i << ": " << x[i] << " vs " << y[i];
  return ::testing::AssertionSuccess();
}

class EagerVsLazy : public ::testing::TestWithParam<std::tuple<ir::Op, int>> {
 protected:
  void SetUp() override {
    saved_ = compile_options();
    CompileOptions o = saved_;
    o.opt_level = std::get<1>(GetParam());
    o.verify = true;
    set_compile_options(o);
  }
  void TearDown() override { set_compile_options(saved_); }
  CompileOptions saved_;
};

TEST_P(EagerVsLazy, SameResults) {
  const ir::Op op = std::get<0>(GetParam());
  const int level = std::get<1>(GetParam());
  const std::vector<OpSample> samples = testing::samples_for(op);
  ASSERT_FALSE(samples.empty()) << ir::mnemonic(op) << " has no samples";
  for (const OpSample& base : samples) {
    for (DType dt : {DType::F64, DType::F32}) {
      if (dt == DType::F32 && !testing::takes_floats(base)) continue;
      const OpSample s = dt == DType::F64 ? base : testing::at_dtype(base, dt);
      const std::vector<Tensor> eager = testing::run_sample(s);
      std::vector<Tensor> lazy;
      {
        ModeGuard guard(Mode::Lazy);
        lazy = testing::run_sample(s);
        for (const Tensor& t : lazy) ASSERT_TRUE(is_pending(t)) << s.label();
        // The traced graph prints, parses back to the same text, and verifies.
        const std::string text = debug::graph_text(lazy);
        ir::Graph g = ir::parse(text);
        EXPECT_EQ(ir::print(g), text) << s.label();
        EXPECT_NO_THROW(ir::verify(g)) << s.label();
        mark_step();
      }
      ASSERT_EQ(lazy.size(), eager.size());
      const double tol = dt == DType::F64 ? 1e-13 : 2e-6;
      for (size_t i = 0; i < eager.size(); ++i) {
        // GEMMs and convolutions sum hundreds of f32 products in an order their kernel picks,
        // and the compiled step may pick another kernel (a channels-last convolution): an
        // element that cancels is off by the rounding of the products' sum, so its absolute
        // error is bounded by the output's largest magnitude rather than its own.
        double atol = tol;
        if (dt == DType::F32 && ir::as_library(op))
          for (double v : eager[i].to_vector<double>()) atol = std::max(atol, 4 * tol * std::abs(v));
        // Likewise a reduction of thousands of f32 terms (the compiled step sums in vector
        // partial sums): its rounding scales with its terms, not with a sum that cancels, so the
        // same reduction of |x| bounds it.
        if (dt == DType::F32 && ir::as_reduce(op) && is_float(eager[i].dtype())) {
          std::vector<Tensor> magnitudes;
          for (const Tensor& t : s.inputs) magnitudes.push_back(is_float(t.dtype()) ? abs(t) : t);
          for (double v : testing::run_sample(s, magnitudes)[i].to_vector<double>())
            atol = std::max(atol, tol * std::abs(v));
        }
        if (level == 0)
          EXPECT_TRUE(SameValues(lazy[i], eager[i])) << s.label() << " " << dtype_name(dt) << " output " << i;
        else
          EXPECT_TRUE(testing::AllClose(lazy[i], eager[i], atol, tol))
              << s.label() << " " << dtype_name(dt) << " output " << i << " at opt level " << level;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, EagerVsLazy,
                         ::testing::Combine(::testing::ValuesIn(ir::all_ops()), ::testing::Values(0, 1, 2)),
                         [](const auto& p) {
                           return std::string(ir::info(std::get<0>(p.param)).name) + "_O" +
                                  std::to_string(std::get<1>(p.param));
                         });

}  // namespace
}  // namespace lt
