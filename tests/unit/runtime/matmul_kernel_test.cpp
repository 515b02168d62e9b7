// MatMul and the GEMM entry point against a naive triple loop accumulated in double: every
// transpose combination, broadcast batch dims, the folded-batch path, both thread splits (rows
// and columns), empty contractions, and alpha/beta with strided operands.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "ir/type_rules.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/kernel.h"
#include "tests/unit/runtime/host_tensor.h"
#include "runtime/thread_pool.h"

namespace lt {
namespace {

template <class T>
using Tensor = testing::HostTensor<T>;
using testing::dtype_of;

using testing::random_tensor;

// Element (i, j) of the last two dims of `t`, read through the batch index of the output
// (broadcast: size-1 and missing batch dims read index 0).
template <class T>
double at(const Tensor<T>& t, const std::vector<int64_t>& out_batch, int64_t i, int64_t j) {
  const Shape& s = t.type.shape;
  const size_t sb = s.size() - 2, ob = out_batch.size();
  int64_t off = 0;
  for (size_t d = 0; d < sb; ++d) off = off * s[d] + (s[d] == 1 ? 0 : out_batch[ob - sb + d]);
  return t.data[(off * s[sb] + i) * s[sb + 1] + j];
}

template <class T>
std::vector<double> reference_matmul(const Tensor<T>& a, const Tensor<T>& b, const Shape& out,
                                     const ir::MatMulAttrs& at_) {
  const size_t r = out.size();
  const int64_t m = out[r - 2], n = out[r - 1];
  const int64_t k = at_.transpose_a ? a.type.shape.end()[-2] : a.type.shape.end()[-1];
  std::vector<double> y(numel(out));
  std::vector<int64_t> bi(r - 2);
  for (int64_t o = 0; o < numel(out); o += m * n) {
    int64_t rem = o / (m * n);
    for (size_t d = r - 2; d-- > 0;) {
      bi[d] = rem % out[d];
      rem /= out[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q)
          s += (at_.transpose_a ? at(a, bi, q, i) : at(a, bi, i, q)) *
               (at_.transpose_b ? at(b, bi, j, q) : at(b, bi, q, j));
        y[o + i * n + j] = s;
      }
  }
  return y;
}

template <class T>
void check_matmul(const Shape& as, const Shape& bs, ir::MatMulAttrs attrs, std::mt19937& rng) {
  Tensor<T> a = random_tensor<T>(as, rng), b = random_tensor<T>(bs, rng);
  const std::vector<TensorType> types = {a.type, b.type};
  Tensor<T> y{ir::infer_types(ir::Op::MatMul, types, attrs).at(0), {}};
  y.data.assign(y.type.numel(), std::numeric_limits<T>::quiet_NaN());  // must be overwritten
  const rt::TensorRef in[] = {a.ref(), b.ref()}, out[] = {y.ref()};
  rt::run_library(ir::LibraryOp::MatMul, attrs, in, out);
  const std::vector<double> want = reference_matmul(a, b, y.type.shape, attrs);
  const int64_t k = attrs.transpose_a ? as.end()[-2] : as.end()[-1];
  const double tol = (std::is_same_v<T, double> ? 1e-13 : 2e-6) * (k + 1);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(y.data[i], want[i], tol)
        << shape_str(as) << " x " << shape_str(bs) << " ta=" << attrs.transpose_a
        << " tb=" << attrs.transpose_b << " at " << i;
}

// [..., M, K] with the last two dims swapped when `t`.
Shape operand(Shape batch, int64_t rows, int64_t cols, bool t) {
  batch.push_back(t ? cols : rows);
  batch.push_back(t ? rows : cols);
  return batch;
}

template <class T>
void check_all_transposes(const Shape& ab, const Shape& bb, int64_t m, int64_t n, int64_t k,
                          std::mt19937& rng) {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      check_matmul<T>(operand(ab, m, k, ta), operand(bb, k, n, tb), {ta, tb}, rng);
}

TEST(MatMulKernel, PlainAndTransposedMatchReference) {
  std::mt19937 rng(1);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    check_all_transposes<float>({}, {}, 5, 7, 3, rng);
    check_all_transposes<double>({}, {}, 1, 1, 1, rng);
    check_all_transposes<double>({}, {}, 1, 33, 17, rng);
    check_all_transposes<float>({}, {}, 67, 45, 93, rng);
    check_all_transposes<double>({}, {}, 130, 129, 131, rng);  // split over rows at 2 threads
    check_all_transposes<float>({}, {}, 20, 600, 300, rng);    // wide: split over columns
  }
  rt::set_num_threads(1);
}

TEST(MatMulKernel, BatchDimsBroadcast) {
  std::mt19937 rng(2);
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    check_all_transposes<double>({2, 1}, {3}, 5, 4, 7, rng);
    check_all_transposes<float>({}, {3}, 6, 5, 4, rng);
    check_all_transposes<float>({4}, {}, 6, 5, 4, rng);   // folds into one tall GEMM
    check_all_transposes<double>({2, 3}, {2, 3}, 3, 4, 5, rng);
    check_all_transposes<float>({1, 3}, {2, 1}, 9, 8, 7, rng);
    check_all_transposes<double>({3}, {3}, 160, 150, 140, rng);  // few large: split each GEMM
    check_all_transposes<float>({16}, {1}, 12, 10, 8, rng);    // many small: split the batch
  }
  rt::set_num_threads(1);
}

TEST(MatMulKernel, EmptyContractionGivesZeros) {
  std::mt19937 rng(3);
  check_all_transposes<float>({}, {}, 4, 3, 0, rng);
  check_all_transposes<double>({2}, {2}, 4, 3, 0, rng);
  check_all_transposes<float>({2}, {}, 0, 3, 5, rng);
}

// C = alpha * op(A) op(B) + beta * C on sub-blocks of larger row-major arrays.
template <class T>
void check_gemm(bool ta, bool tb, double alpha, double beta, std::mt19937& rng) {
  const int64_t m = 37, n = 29, k = 41, pad = 5;
  const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
  const int64_t lda = ac + pad, ldb = bc + pad, ldc = n + pad;
  Tensor<T> a = random_tensor<T>({ar, lda}, rng), b = random_tensor<T>({br, ldb}, rng);
  Tensor<T> c = random_tensor<T>({m, ldc}, rng);
  if (beta == 0) std::fill(c.data.begin(), c.data.end(), std::numeric_limits<T>::quiet_NaN());
  const std::vector<T> c0 = c.data;
  rt::gemm({.dtype = dtype_of<T>, .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k,
            .a = a.data.data(), .lda = lda, .b = b.data.data(), .ldb = ldb, .c = c.data.data(),
            .ldc = ldc, .alpha = alpha, .beta = beta});
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q)
        s += double(ta ? a.data[q * lda + i] : a.data[i * lda + q]) *
             double(tb ? b.data[j * ldb + q] : b.data[q * ldb + j]);
      const double want = alpha * s + (beta == 0 ? 0.0 : beta * c0[i * ldc + j]);
      const double tol = std::is_same_v<T, double> ? 1e-12 : 1e-4;
      ASSERT_NEAR(c.data[i * ldc + j], want, tol);
    }
    for (int64_t j = n; j < ldc; ++j)  // the gap between rows is never written
      ASSERT_TRUE(std::isnan(c0[i * ldc + j]) ? std::isnan(c.data[i * ldc + j])
                                              : c.data[i * ldc + j] == c0[i * ldc + j]);
  }
}

TEST(MatMulKernel, GemmEntryPointHonoursStridesAlphaBeta) {
  std::mt19937 rng(4);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      check_gemm<float>(ta, tb, 1.0, 0.0, rng);
      check_gemm<double>(ta, tb, 0.5, 2.0, rng);
      check_gemm<double>(ta, tb, -1.0, 1.0, rng);
    }
}

TEST(MatMulKernel, BatchedGemmGivesEachMatrixsOwnBits) {
  // Attention's shapes: 64 matrices of [64, 32] x [32, 64] and back. gemm_batch (one oneDNN
  // primitive per run of matrices, where oneDNN runs f32) writes the bits one GEMM per matrix
  // writes, so a matmul's result does not depend on how the pool cuts the batch.
  std::mt19937 rng(5);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (const auto& [m, n, k] : {std::array<int64_t, 3>{64, 64, 32}, {64, 32, 64}, {7, 5, 3}}) {
        const int64_t batch = 64;
        Tensor<float> a = random_tensor<float>({batch, ta ? k : m, ta ? m : k}, rng);
        Tensor<float> b = random_tensor<float>({batch, tb ? n : k, tb ? k : n}, rng);
        std::vector<float> one(batch * m * n), batched(batch * m * n, 1.0f);
        rt::GemmArgs g{.trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k,
                       .a = a.data.data(), .lda = ta ? m : k, .b = b.data.data(),
                       .ldb = tb ? k : n, .c = one.data(), .ldc = n};
        for (int64_t i = 0; i < batch; ++i) {
          rt::GemmArgs gi = g;
          gi.a = a.data.data() + i * m * k;
          gi.b = b.data.data() + i * k * n;
          gi.c = one.data() + i * m * n;
          gi.parallel = false;
          rt::gemm(gi);
        }
        g.c = batched.data();
        rt::gemm_batch(g, batch, m * k, k * n, m * n);
        EXPECT_EQ(batched, one) << m << "x" << n << "x" << k << " ta=" << ta << " tb=" << tb;
      }
}

TEST(MatMulKernel, BatchedBf16GemmGivesEachMatrixsOwnBits) {
  // bf16 operands and result (autocast's attention), on oneDNN's bf16 kernels where the CPU has
  // them and on the f32 fallback elsewhere.
  std::mt19937 rng(6);
  std::uniform_int_distribution<uint16_t> bits(0x3c00, 0x3f80);  // bf16 in [2^-7, 1)
  const int64_t batch = 64, m = 64, n = 32, k = 64;
  std::vector<uint16_t> a(batch * m * k), b(batch * k * n);
  for (uint16_t& v : a) v = bits(rng) ^ (rng() & 1 ? 0x8000 : 0);
  for (uint16_t& v : b) v = bits(rng);
  std::vector<uint16_t> one(batch * m * n), batched(batch * m * n, 0);
  rt::GemmArgs g{.dtype = DType::BF16, .m = m, .n = n, .k = k, .a = a.data(), .lda = k,
                 .b = b.data(), .ldb = n, .c = one.data(), .ldc = n};
  for (int64_t i = 0; i < batch; ++i) {
    rt::GemmArgs gi = g;
    gi.a = a.data() + i * m * k;
    gi.b = b.data() + i * k * n;
    gi.c = one.data() + i * m * n;
    gi.parallel = false;
    rt::gemm(gi);
  }
  g.c = batched.data();
  rt::gemm_batch(g, batch, m * k, k * n, m * n);
  EXPECT_EQ(batched, one);
}

// f32_out: bf16 operands give the f32 sum of their products, unrounded, on each of the entry
// point's paths: one GEMM (folded batch), a GEMM per matrix (broadcast batch dims) and one
// batched GEMM per run of small matrices; f32 results sit at their own offsets, twice the bf16
// ones.
TEST(MatMulKernel, Bf16WithF32OutIsTheUnroundedSum) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint16_t> bits(0x3c00, 0x3f80);  // bf16 in [2^-7, 1)
  auto bf16 = [&](const Shape& s) {
    Tensor<uint16_t> t{{DType::BF16, s}, std::vector<uint16_t>(numel(s))};
    for (uint16_t& v : t.data) v = bits(rng) ^ (rng() & 1 ? 0x8000 : 0);
    return t;
  };
  auto widened = [](const Tensor<uint16_t>& t) {
    Tensor<double> d{{DType::F64, t.type.shape}, {}};
    for (uint16_t v : t.data) d.data.push_back(std::bit_cast<float>(uint32_t{v} << 16));
    return d;
  };
  struct Case {
    Shape a, b;
  };
  for (int threads : {1, 2}) {
    rt::set_num_threads(threads);
    for (const Case& c : {Case{{8, 16, 32}, {32, 24}}, Case{{2, 1, 5, 7}, {3, 7, 6}},
                          Case{{16, 4, 8}, {16, 8, 6}}}) {
      SCOPED_TRACE(shape_str(c.a) + " x " + shape_str(c.b));
      Tensor<uint16_t> a = bf16(c.a), b = bf16(c.b);
      const ir::MatMulAttrs at{false, false, true};
      const std::vector<TensorType> types = {a.type, b.type};
      const TensorType yt = ir::infer_types(ir::Op::MatMul, types, at).at(0);
      ASSERT_EQ(yt.dtype, DType::F32);
      Tensor<float> y{yt, std::vector<float>(yt.numel(), std::nanf(""))};
      const rt::TensorRef in[] = {a.ref(), b.ref()}, out[] = {y.ref()};
      rt::run_library(ir::LibraryOp::MatMul, at, in, out);
      const std::vector<double> want = reference_matmul(widened(a), widened(b), yt.shape, at);
      const int64_t k = c.a.back();
      size_t off_bf16 = 0;
      for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(y.data[i], want[i], k * std::ldexp(1.0, -23)) << i;  // |products| < 1
        const uint32_t u = std::bit_cast<uint32_t>(y.data[i]);
        off_bf16 += (u & 0xffff) != 0;
      }
      EXPECT_GT(off_bf16, want.size() / 2);
    }
  }
  rt::set_num_threads(1);
}

}  // namespace
}  // namespace lt
