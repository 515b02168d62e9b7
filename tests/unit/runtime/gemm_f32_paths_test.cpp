// Both f32 paths of rt::gemm (the build's BLAS and oneDNN, gemm_paths.h) against a float64
// reference at the trainers' shapes: every transpose, alpha/beta, padded strides, 1 and 2 threads.
// Whichever one gemm() selects, the other stays correct for the CPUs that get it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/kernels/gemm.h"
#include "runtime/kernels/gemm_paths.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

using GemmPath = void (*)(const rt::GemmArgs&);

struct Case {
  int64_t m, n, k;
  double alpha, beta;
  int64_t pad;  // extra elements at the end of every row of A, B and C
};

void check(GemmPath path, const Case& s, bool ta, bool tb, std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k << " trans_a="
                                    << ta << " trans_b=" << tb << " alpha=" << s.alpha
                                    << " beta=" << s.beta << " pad=" << s.pad);
  std::uniform_real_distribution<float> u(-1, 1);
  auto random = [&](int64_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  };
  const int64_t ac = ta ? s.m : s.k, bc = tb ? s.k : s.n;
  const int64_t lda = ac + s.pad, ldb = bc + s.pad, ldc = s.n + s.pad;
  const std::vector<float> a = random((ta ? s.k : s.m) * lda), b = random((tb ? s.n : s.k) * ldb);
  std::vector<float> c = random(s.m * ldc);
  if (s.beta == 0) std::fill(c.begin(), c.end(), NAN);  // beta 0 never reads C
  const std::vector<float> c0 = c;
  path({.dtype = DType::F32, .trans_a = ta, .trans_b = tb, .m = s.m, .n = s.n, .k = s.k,
        .a = a.data(), .lda = lda, .b = b.data(), .ldb = ldb, .c = c.data(), .ldc = ldc,
        .alpha = s.alpha, .beta = s.beta});
  const double eps = s.k * std::ldexp(1.0, -24);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t q = 0; q < s.k; ++q) {
        const double t = double(ta ? a[q * lda + i] : a[i * lda + q]) *
                         double(tb ? b[j * ldb + q] : b[q * ldb + j]);
        sum += t;
        abs_sum += std::abs(t);
      }
      const double old = s.beta == 0 ? 0.0 : c0[i * ldc + j];
      const double want = s.alpha * sum + s.beta * old;
      const double tol = eps * (std::abs(s.alpha) * abs_sum + std::abs(s.beta * old)) + 1e-6;
      ASSERT_NEAR(c[i * ldc + j], want, tol) << "at (" << i << ", " << j << ")";
    }
    for (int64_t j = s.n; j < ldc; ++j)
      ASSERT_TRUE(std::isnan(c0[i * ldc + j]) ? std::isnan(c[i * ldc + j])
                                              : c[i * ldc + j] == c0[i * ldc + j]);
  }
}

// MLP layers, the CNN's im2col products, a GPT projection over 512 of its 4096 rows, and an
// empty contraction.
const Case kCases[] = {{128, 128, 784, 1, 0, 0},  {128, 10, 128, 0.5, 1, 3},
                       {784, 128, 128, 1, 1, 0},  {32, 784, 9, 1, 0, 5},
                       {64, 196, 288, -2, 0.25, 0}, {288, 196, 64, 1, 0, 1},
                       {512, 512, 128, 1, 0, 0},  {5, 7, 0, 1, 0.5, 2}};

void check_path(GemmPath path) {
  std::mt19937 rng(11);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& s : kCases)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) check(path, s, ta, tb, rng);
  }
  rt::set_num_threads(1);
}

TEST(GemmF32Paths, BlasMatchesReference) { check_path(rt::gemm_blas); }

TEST(GemmF32Paths, OnednnMatchesReference) {
  // f32 on oneDNN is selected only with its AVX-512 kernels, but is correct anywhere.
  check_path(rt::gemm_onednn);
}

TEST(GemmF32Paths, BackendIsNamed) {
  const std::string backend = rt::gemm_backend();
  EXPECT_TRUE(backend == "onednn" || backend == "openblas" || backend == "eigen") << backend;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
    EXPECT_EQ(backend, "onednn");
  }
}

}  // namespace
}  // namespace lt
