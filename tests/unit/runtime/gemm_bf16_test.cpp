// The bf16 and f16 GEMMs (rt::gemm with bf16 or f16 operands) against a float64 product of the
// same values, at the trainers' shapes (MLP layers, the CNN's im2col products, the GPT's
// projections over 4096 rows), every transpose, alpha/beta, padded strides, narrow and f32
// outputs, 1 and 2 threads, on the path this CPU selects and on the f32 fallback; and the error
// for unsupported dtypes. The reference roundings are GCC's _Float16 and bit arithmetic for bf16.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/gemm_paths.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

/// The operands' dtype: bf16 or f16, both 16 bits.
DType g_low = DType::BF16;

float from_low(uint16_t b) {
  if (g_low == DType::F16) return static_cast<float>(std::bit_cast<_Float16>(b));
  return std::bit_cast<float>(uint32_t{b} << 16);
}

/// Round to nearest even (finite values; NaN only as low_nan()).
uint16_t to_low(float f) {
  if (g_low == DType::F16) return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
  const uint32_t u = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

uint16_t low_nan() { return g_low == DType::F16 ? 0x7e00 : 0x7fc0; }

enum class Path { Selected, ViaF32 };

struct Shape3 {
  int64_t m, n, k;
};

struct Variant {
  double alpha, beta;
  DType c;
  int64_t pad;  // extra elements at the end of every row of A, B and C
};

// Plain, narrow output, accumulate into C with strides, scaled both ways into narrow C with
// strides (BF16 in a variant stands for the operands' dtype).
const Variant kVariants[] = {{1.0, 0.0, DType::F32, 0},
                             {1.0, 0.0, DType::BF16, 0},
                             {0.5, 1.0, DType::F32, 3},
                             {-2.0, 0.25, DType::BF16, 5}};

/// A [rows, ld] matrix of narrow values uniform in [-1, 1).
std::vector<uint16_t> random_low(int64_t rows, int64_t ld, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<uint16_t> v(rows * ld);
  for (uint16_t& x : v) x = to_low(u(rng));
  return v;
}

/// Runs one GEMM and checks rows 0, row_step, 2 * row_step, ... and the last row: each element
/// against the float64 product within f32 accumulation error (k * 2^-24 of the sum of absolute
/// terms) plus, for narrow C, the final rounding (2^-8 relative for bf16, 2^-11 for f16); the gap
/// after each row untouched.
void check(const Shape3& s, bool ta, bool tb, const Variant& v, Path path, int64_t row_step,
           std::mt19937& rng) {
  SCOPED_TRACE(::testing::Message() << dtype_name(g_low) << " m=" << s.m << " n=" << s.n << " k=" << s.k
                                    << " trans_a=" << ta << " trans_b=" << tb << " alpha="
                                    << v.alpha << " beta=" << v.beta << " c="
                                    << dtype_name(v.c) << " pad=" << v.pad);
  const int64_t ar = ta ? s.k : s.m, ac = ta ? s.m : s.k, br = tb ? s.n : s.k,
                bc = tb ? s.k : s.n;
  const int64_t lda = ac + v.pad, ldb = bc + v.pad, ldc = s.n + v.pad;
  const std::vector<uint16_t> a = random_low(ar, lda, rng), b = random_low(br, ldb, rng);
  const bool c_bf16 = v.c == DType::BF16;  // a narrow C
  std::vector<uint16_t> c16 = random_low(c_bf16 ? s.m : 0, ldc, rng);
  std::vector<float> c32(c_bf16 ? 0 : s.m * ldc);
  for (float& x : c32) x = std::uniform_real_distribution<float>(-1, 1)(rng);
  if (v.beta == 0) {  // beta 0 never reads C
    std::fill(c16.begin(), c16.end(), low_nan());
    std::fill(c32.begin(), c32.end(), NAN);
  }
  const std::vector<uint16_t> c16_0 = c16;
  const std::vector<float> c32_0 = c32;
  auto c_at = [&](const auto& c, int64_t i) {
    if constexpr (std::is_same_v<std::decay_t<decltype(c)>, std::vector<float>>) return c[i];
    else return from_low(c[i]);
  };
  const rt::GemmArgs g{.dtype = g_low, .trans_a = ta, .trans_b = tb, .m = s.m, .n = s.n,
                       .k = s.k, .a = a.data(), .lda = lda, .b = b.data(), .ldb = ldb,
                       .c = c_bf16 ? static_cast<void*>(c16.data()) : c32.data(), .ldc = ldc,
                       .alpha = v.alpha, .beta = v.beta,
                       .c_dtype = c_bf16 ? g_low : DType::F32};
  if (path == Path::Selected) rt::gemm(g);
  else rt::gemm_low_via_f32(g);

  const double acc_eps = s.k * std::ldexp(1.0, -24);
  for (int64_t i = 0;; i = std::min(s.m - 1, i + row_step)) {
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int64_t q = 0; q < s.k; ++q) {
        const double t = double(from_low(ta ? a[q * lda + i] : a[i * lda + q])) *
                         double(from_low(tb ? b[j * ldb + q] : b[q * ldb + j]));
        sum += t;
        abs_sum += std::abs(t);
      }
      const double old = v.beta == 0 ? 0.0
                                     : (c_bf16 ? c_at(c16_0, i * ldc + j)
                                               : c_at(c32_0, i * ldc + j));
      const double want = v.alpha * sum + v.beta * old;
      const double tol = acc_eps * (std::abs(v.alpha) * abs_sum + std::abs(v.beta * old)) +
                         (c_bf16 ? std::ldexp(std::abs(want), g_low == DType::F16 ? -11 : -8)
                                 : 0.0) +
                         1e-7;
      const double got = c_bf16 ? c_at(c16, i * ldc + j) : c_at(c32, i * ldc + j);
      ASSERT_NEAR(got, want, tol) << "at (" << i << ", " << j << ")";
    }
    for (int64_t j = s.n; j < ldc; ++j)  // the gap between rows is never written
      if (c_bf16) ASSERT_EQ(c16[i * ldc + j], c16_0[i * ldc + j]);
      else ASSERT_TRUE(std::isnan(c32_0[i * ldc + j]) ? std::isnan(c32[i * ldc + j])
                                                      : c32[i * ldc + j] == c32_0[i * ldc + j]);
    if (i == s.m - 1) break;
  }
}

/// Every transpose and variant of each shape, bf16 and f16: the selected path on 1 and 2 threads,
/// and the fallback.
void check_shapes(const std::vector<Shape3>& shapes, int64_t row_step) {
  std::mt19937 rng(7);
  for (DType low : {DType::BF16, DType::F16}) {
    g_low = low;
    for (const Shape3& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const Variant& v : kVariants) {
            for (int threads : {1, 2}) {
              rt::set_num_threads(threads);
              check(s, ta, tb, v, Path::Selected, row_step, rng);
            }
            rt::set_num_threads(1);
            check(s, ta, tb, v, Path::ViaF32, row_step, rng);
          }
  }
}

// Forward [128,784]x[784,128] and [128,128]x[128,10]; the backward products are the transposed
// variants of the same shapes (weight gradient [784,128] = x^T gy: m 784, n 128, k 128).
TEST(GemmBf16, MlpShapes) {
  check_shapes({{128, 128, 784}, {128, 10, 128}, {784, 128, 128}, {128, 784, 128}}, 1);
}

// fmnist_cnn's convolutions as im2col GEMMs per image: w[32, 9] x col[9, 784] and
// w[64, 288] x col[288, 196], their weight gradients (k = OH*OW) and input gradients (k = O).
TEST(GemmBf16, CnnIm2colShapes) {
  check_shapes({{32, 784, 9}, {64, 196, 288}, {64, 288, 196}, {288, 196, 64}}, 1);
}

// char_gpt at batch 64, context 64: 4096 rows through 128->512, 512->128 and the 128->256 vocab
// head, and a weight gradient summed over the 4096 rows. Every 97th row is checked.
TEST(GemmBf16, GptShapes) {
  check_shapes({{4096, 512, 128}, {4096, 128, 512}, {4096, 256, 128}, {128, 512, 4096}}, 97);
}

TEST(GemmBf16, EmptyContractionScalesC) {
  std::mt19937 rng(8);
  for (DType low : {DType::BF16, DType::F16}) {
    g_low = low;
    for (Path path : {Path::Selected, Path::ViaF32})
      for (const Variant& v : kVariants) check({5, 7, 0}, false, false, v, path, 1, rng);
  }
}

TEST(GemmBf16, BackendFollowsCpuFeatures) {
  const std::string backend = rt::gemm_bf16_backend();
  if (__builtin_cpu_supports("amx-bf16"))  // the OS may still refuse AMX state to the process
    EXPECT_TRUE(backend == "onednn-amx" || backend == "onednn-avx512_core_bf16") << backend;
  else if (__builtin_cpu_supports("avx512bf16"))
    EXPECT_EQ(backend, "onednn-avx512_core_bf16");
  else
    EXPECT_EQ(backend, "f32-fallback");
}

std::string gemm_error(DType a, DType b, DType c) {
  double in_a[2] = {}, in_b[2] = {}, out[4] = {};  // room for any dtype
  try {
    rt::gemm({.dtype = a, .m = 2, .n = 2, .k = 1, .a = in_a, .lda = 1, .b = in_b, .ldb = 2,
              .c = out, .ldc = 2, .b_dtype = b, .c_dtype = c});
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(GemmBf16, UnsupportedDtypesThrow) {
  const std::string rule =
      " is not supported: A and B must both be f32, f64, bf16, f16, i64 or i32, and C of their "
      "dtype (or f32 for bf16 and f16 inputs)";
  using enum DType;
  EXPECT_EQ(gemm_error(BF16, F32, F32), "gemm: A bf16 x B f32 -> C f32" + rule);
  EXPECT_EQ(gemm_error(F32, F32, BF16), "gemm: A f32 x B f32 -> C bf16" + rule);
  EXPECT_EQ(gemm_error(BF16, BF16, F64), "gemm: A bf16 x B bf16 -> C f64" + rule);
  EXPECT_EQ(gemm_error(F64, F64, F32), "gemm: A f64 x B f64 -> C f32" + rule);
  EXPECT_EQ(gemm_error(F16, BF16, F32), "gemm: A f16 x B bf16 -> C f32" + rule);
  EXPECT_EQ(gemm_error(F16, F16, BF16), "gemm: A f16 x B f16 -> C bf16" + rule);
  EXPECT_EQ(gemm_error(F16, F16, F16), "no error");
  EXPECT_EQ(gemm_error(F16, F16, F32), "no error");
  EXPECT_EQ(gemm_error(I64, I64, I64), "no error");
  EXPECT_EQ(gemm_error(I64, I32, I64), "gemm: A i64 x B i32 -> C i64" + rule);
  EXPECT_EQ(gemm_error(BF16, BF16, F32), "no error");
  EXPECT_EQ(gemm_error(BF16, BF16, BF16), "no error");
}

}  // namespace
}  // namespace lt
