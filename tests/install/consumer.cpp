// Built against the installed lazytrain only (tests/install/check_install.sh): every public
// header compiles from the installed tree, and an eager and a lazy computation link and run. The
// lazy one runs compiled (matmul via OpenBLAS, a fused loop kernel via LLVM), so every library
// the installed package names is linked. Both are checked against plain C++.
#include <lt/autograd.h>
#include <lt/data.h>
#include <lt/lazy.h>
#include <lt/lt.h>
#include <lt/metrics.h>
#include <lt/ops.h>
#include <lt/tensor.h>
#include <lt/threads.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace {

// sum(relu(a @ b - 1)), a [2,3], b [3,2].
lt::Tensor computation(const lt::Tensor& a, const lt::Tensor& b) {
  return lt::sum(lt::relu(lt::sub(lt::matmul(a, b), lt::ones({2, 2}))));
}

}  // namespace

int main() {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {0.5f, -1, 2, 0.25f, -3, 1};
  double want = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      double c = 0;
      for (int k = 0; k < 3; ++k) c += a[i * 3 + k] * b[k * 2 + j];
      want += std::max(c - 1, 0.0);
    }

  const lt::Tensor ta = lt::from_vector(a, {2, 3});
  const lt::Tensor tb = lt::from_vector(b, {3, 2});
  const double eager = computation(ta, tb).item<float>();

  double lazy = 0;
  {
    lt::ModeGuard mode(lt::Mode::Lazy);
    const lt::Tensor s = computation(ta, tb);
    const bool traced = lt::is_pending(s);
    lt::mark_step();
    if (!traced || lt::is_pending(s) || lt::metrics::counter("mark_step") != 1) {
      std::printf("the lazy computation was not traced, then run by mark_step\n");
      return 1;
    }
    lazy = s.item<float>();
  }
  std::printf("want %g eager %g lazy %g\n", want, eager, lazy);
  return std::abs(eager - want) < 1e-5 && std::abs(lazy - want) < 1e-5 ? 0 : 1;
}
