// Every op of the tables, through its samples: the lazy result (traced, cut into a graph, run by
// the reference interpreter) equals the eager result, in f64 and in f32. Both run the same
// kernels on 64-byte-aligned buffers, so the comparison is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/parser.h"
#include "lt/lazy.h"
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

class EagerVsLazy : public ::testing::TestWithParam<ir::Op> {};

TEST_P(EagerVsLazy, SameResults) {
  const std::vector<OpSample> samples = testing::samples_for(GetParam());
  ASSERT_FALSE(samples.empty()) << ir::mnemonic(GetParam()) << " has no samples";
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
      for (size_t i = 0; i < eager.size(); ++i)
        EXPECT_TRUE(SameValues(lazy[i], eager[i])) << s.label() << " " << dtype_name(dt) << " output " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, EagerVsLazy, ::testing::ValuesIn(ir::all_ops()),
                         [](const auto& p) { return std::string(ir::info(p.param).name); });

}  // namespace
}  // namespace lt
