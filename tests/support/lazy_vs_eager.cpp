#include "tests/support/lazy_vs_eager.h"

#include <gtest/gtest.h>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/all_close.h"

namespace lt::testing {

void expect_lazy_matches_eager(std::span<const TracedCall> calls, double f64_tol,
                               double f32_tol) {
  const CompileOptions saved = compile_options();
  for (int level : {0, 1, 2}) {
    CompileOptions o = saved;
    o.opt_level = level;
    set_compile_options(o);
    for (const TracedCall& c : calls) {
      for (DType dt : {DType::F64, DType::F32}) {
        SCOPED_TRACE(c.name + " " + std::string(dtype_name(dt)) + " O" + std::to_string(level));
        std::vector<Tensor> in = c.inputs;
        for (Tensor& t : in)
          if (t.dtype() == DType::F64) t = cast(t, dt);
        const std::vector<Tensor> eager = c.f(in);
        std::vector<Tensor> lazy;
        {
          ModeGuard guard(Mode::Lazy);
          lazy = c.f(in);
          mark_step();
        }
        ASSERT_EQ(lazy.size(), eager.size());
        const double tol = level == 0 ? 0 : dt == DType::F64 ? f64_tol : f32_tol;
        for (size_t k = 0; k < eager.size(); ++k)
          EXPECT_TRUE(AllClose(lazy[k], eager[k], tol, tol)) << "output " << k;
      }
    }
  }
  set_compile_options(saved);
}

}  // namespace lt::testing
