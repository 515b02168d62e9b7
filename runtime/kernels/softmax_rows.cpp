// Rows of attention probabilities are short (64 in the GPT step): one row at a time, each row's
// max and sum end in a horizontal reduction whose latency the few vectors of the row cannot hide
// (a kernel that did so lost to Eigen's). Four rows side by side
// give the core four independent chains at every step.
#include "runtime/kernels/softmax_rows.h"

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "ir/error.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace lt::rt {

#if defined(__AVX512F__)

namespace {

constexpr int kRows = 4;   // rows side by side
constexpr int64_t kW = 16;  // floats per vector

/// Rows r .. r + R - 1 (R <= kRows) of n floats, n a multiple of kW.
template <int R>
void rows_block(const float* x, float* y, int64_t n) {
  const __m512 log_min = _mm512_set1_ps(std::log(std::numeric_limits<float>::min()));
  __m512 mx[R], sum[R];
  for (int i = 0; i < R; ++i) mx[i] = _mm512_loadu_ps(x + i * n);
  for (int64_t j = kW; j < n; j += kW)
    for (int i = 0; i < R; ++i) mx[i] = _mm512_max_ps(mx[i], _mm512_loadu_ps(x + i * n + j));
  for (int i = 0; i < R; ++i) {
    mx[i] = _mm512_set1_ps(_mm512_reduce_max_ps(mx[i]));
    sum[i] = _mm512_setzero_ps();
  }
  for (int64_t j = 0; j < n; j += kW)
    for (int i = 0; i < R; ++i) {
      const __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i * n + j), mx[i]);
      // Exactly 0 below the smallest normal (a masked logit); NaN compares false and stays.
      const __mmask16 keep = ~_mm512_cmp_ps_mask(d, log_min, _CMP_LT_OQ);
      const __m512 e = _mm512_maskz_mov_ps(keep, Eigen::internal::pexp<__m512>(d));
      _mm512_storeu_ps(y + i * n + j, e);
      sum[i] = _mm512_add_ps(sum[i], e);
    }
  __m512 inv[R];
  for (int i = 0; i < R; ++i) inv[i] = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum[i]));
  for (int64_t j = 0; j < n; j += kW)
    for (int i = 0; i < R; ++i)
      _mm512_storeu_ps(y + i * n + j, _mm512_mul_ps(_mm512_loadu_ps(y + i * n + j), inv[i]));
}

}  // namespace

// Rows of up to 128: the GPT's vocab softmax (rows of 256) is slower this way in the step, where
// its logits come from memory, though faster when they are in cache.
bool softmax_rows_f32_fits(int64_t n) { return n >= kW && n % kW == 0 && n <= 128; }

void softmax_rows_f32(const float* x, float* y, int64_t r0, int64_t r1, int64_t n) {
  int64_t r = r0;
  for (; r + kRows <= r1; r += kRows) rows_block<kRows>(x + r * n, y + r * n, n);
  for (; r < r1; ++r) rows_block<1>(x + r * n, y + r * n, n);
}

#else

bool softmax_rows_f32_fits(int64_t) { return false; }
void softmax_rows_f32(const float*, float*, int64_t, int64_t, int64_t) {
  LT_UNREACHABLE();  // softmax_rows_f32_fits takes no rows on this build
}

#endif

}  // namespace lt::rt
