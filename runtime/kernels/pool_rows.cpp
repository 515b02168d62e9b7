// The f32 rows of the 2x2 max pool with AVX2 (8 windows a step) and AVX-512 (16), compiled for
// those instruction sets whatever the build targets and picked by the CPU at run time. The last
// step of a row is usually partial (the CNN's rows are 7 and 14 windows), and masked loads and
// stores handle it where the compiler's own vectorization would fall back to scalar code for most
// of a short row; masked-off lanes are never touched (neither set faults on them). AVX2 stores a
// partial step in pieces instead (store_first8).
#include "runtime/kernels/pool_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "ir/error.h"

#define LT_AVX2 __attribute__((target("avx2")))
#define LT_AVX512 __attribute__((target("avx512f")))

namespace lt::rt {
namespace {

// --- AVX2 ----------------------------------------------------------------------------------------

/// All-ones in the first n lanes (none for n <= 0, all 8 for n >= 8).
LT_AVX2 __m256i first_lanes8(int64_t n) {
  const int count = static_cast<int>(std::clamp<int64_t>(n, 0, 8));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(count), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Stores the first n <= 8 lanes of v at p, in pieces of 4, 2 and 1 lanes: AVX2's masked store is
/// slow on AMD (with it the AVX2 rows lost to the portable ones), and a stack copy
/// read back by memcpy stalls on store forwarding.
LT_AVX2 void store_first8(float* p, __m256 v, int64_t n) {
  if (n == 8) return _mm256_storeu_ps(p, v);
  __m128 part = _mm256_castps256_ps128(v);
  if (n & 4) {
    _mm_storeu_ps(p, part);
    part = _mm256_extractf128_ps(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
    part = _mm_movehl_ps(part, part);
    p += 2;
  }
  if (n & 1) _mm_store_ss(p, part);
}

/// Taps 2q (left) and 2q+1 (right) of the n <= 8 windows starting at row[0], lane q.
struct TapPairs8 {
  __m256 left, right;
};

LT_AVX2 TapPairs8 load_tap_pairs8(const float* row, int64_t n) {
  __m256 lo, hi;
  if (n == 8) {
    lo = _mm256_loadu_ps(row);
    hi = _mm256_loadu_ps(row + 8);
  } else {
    lo = _mm256_maskload_ps(row, first_lanes8(2 * n));
    hi = _mm256_maskload_ps(row + 8, first_lanes8(2 * n - 8));
  }
  // Per 128-bit half: (0 2 8 10 | 4 6 12 14); the 64-bit quarters reordered 0 2 1 3 give 0..14.
  const auto even = _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)));
  const auto odd = _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)));
  return {_mm256_castpd_ps(_mm256_permute4x64_pd(even, _MM_SHUFFLE(3, 1, 2, 0))),
          _mm256_castpd_ps(_mm256_permute4x64_pd(odd, _MM_SHUFFLE(3, 1, 2, 0)))};
}

/// pool_beats per lane, as an all-ones lane: !(v <= m) where m is not NaN.
LT_AVX2 __m256 beats8(__m256 m, __m256 v) {
  return _mm256_andnot_ps(_mm256_cmp_ps(v, m, _CMP_LE_OQ), _mm256_cmp_ps(m, m, _CMP_ORD_Q));
}

/// Stores lanes 2q = left[q], 2q+1 = right[q] for the first 2n values.
LT_AVX2 void store_tap_pairs8(float* row, int64_t n, __m256 left, __m256 right) {
  const __m256 a = _mm256_unpacklo_ps(left, right);  // l0 r0 l1 r1 | l4 r4 l5 r5
  const __m256 b = _mm256_unpackhi_ps(left, right);  // l2 r2 l3 r3 | l6 r6 l7 r7
  const __m256 first = _mm256_permute2f128_ps(a, b, 0x20);
  const __m256 second = _mm256_permute2f128_ps(a, b, 0x31);
  if (n >= 4) {
    _mm256_storeu_ps(row, first);
    store_first8(row + 8, second, 2 * n - 8);
  } else {
    store_first8(row, first, 2 * n);
  }
}

LT_AVX2 void forward_avx2(const float* x, int64_t w, int64_t oh, int64_t ow, float* y) {
  for (int64_t i = 0; i < oh; ++i, y += ow) {
    const float* top = x + 2 * i * w;
    for (int64_t q = 0; q < ow; q += 8) {
      const int64_t n = std::min<int64_t>(8, ow - q);
      const TapPairs8 t = load_tap_pairs8(top + 2 * q, n), b = load_tap_pairs8(top + w + 2 * q, n);
      const __m256 upper = _mm256_blendv_ps(t.left, t.right, beats8(t.left, t.right));
      const __m256 lower = _mm256_blendv_ps(b.left, b.right, beats8(b.left, b.right));
      const __m256 max = _mm256_blendv_ps(upper, lower, beats8(upper, lower));
      store_first8(y + q, max, n);
    }
  }
}

LT_AVX2 void backward_avx2(const float* x, const float* gy, int64_t w, int64_t oh, int64_t ow,
                           float* gx) {
  for (int64_t i = 0; i < oh; ++i, gy += ow) {
    const float* top = x + 2 * i * w;
    float* gtop = gx + 2 * i * w;
    for (int64_t q = 0; q < ow; q += 8) {
      const int64_t n = std::min<int64_t>(8, ow - q);
      const TapPairs8 t = load_tap_pairs8(top + 2 * q, n), b = load_tap_pairs8(top + w + 2 * q, n);
      const __m256 top_right = beats8(t.left, t.right), bottom_right = beats8(b.left, b.right);
      const __m256 upper = _mm256_blendv_ps(t.left, t.right, top_right);
      const __m256 lower = _mm256_blendv_ps(b.left, b.right, bottom_right);
      const __m256 in_bottom = beats8(upper, lower);
      const __m256 g =
          n == 8 ? _mm256_loadu_ps(gy + q) : _mm256_maskload_ps(gy + q, first_lanes8(n));
      const __m256 g_top = _mm256_andnot_ps(in_bottom, g), g_bottom = _mm256_and_ps(in_bottom, g);
      store_tap_pairs8(gtop + 2 * q, n, _mm256_andnot_ps(top_right, g_top),
                       _mm256_and_ps(top_right, g_top));
      store_tap_pairs8(gtop + w + 2 * q, n, _mm256_andnot_ps(bottom_right, g_bottom),
                       _mm256_and_ps(bottom_right, g_bottom));
    }
  }
}

// --- AVX-512 -------------------------------------------------------------------------------------

/// The first n lanes (none for n <= 0, all 16 for n >= 16).
LT_AVX512 __mmask16 first_lanes16(int64_t n) {
  if (n <= 0) return 0;
  return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

/// Taps 2q (left) and 2q+1 (right) of the n <= 16 windows starting at row[0], lane q.
struct TapPairs16 {
  __m512 left, right;
};

LT_AVX512 TapPairs16 load_tap_pairs16(const float* row, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 lo = _mm512_maskz_loadu_ps(first_lanes16(2 * n), row);
  const __m512 hi = _mm512_maskz_loadu_ps(first_lanes16(2 * n - 16), row + 16);
  return {_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi)};
}

/// pool_beats per lane: !(v <= m) where m is not NaN.
LT_AVX512 __mmask16 beats16(__m512 m, __m512 v) {
  return _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(m, m, _CMP_ORD_Q), v, m, _CMP_NLE_UQ);
}

/// Stores lanes 2q = left[q], 2q+1 = right[q] for the first 2n values.
LT_AVX512 void store_tap_pairs16(float* row, int64_t n, __m512 left, __m512 right) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_mask_storeu_ps(row, first_lanes16(2 * n), _mm512_permutex2var_ps(left, lo, right));
  _mm512_mask_storeu_ps(row + 16, first_lanes16(2 * n - 16),
                        _mm512_permutex2var_ps(left, hi, right));
}

LT_AVX512 void forward_avx512(const float* x, int64_t w, int64_t oh, int64_t ow, float* y) {
  for (int64_t i = 0; i < oh; ++i, y += ow) {
    const float* top = x + 2 * i * w;
    for (int64_t q = 0; q < ow; q += 16) {
      const int64_t n = std::min<int64_t>(16, ow - q);
      const TapPairs16 t = load_tap_pairs16(top + 2 * q, n);
      const TapPairs16 b = load_tap_pairs16(top + w + 2 * q, n);
      const __m512 upper = _mm512_mask_blend_ps(beats16(t.left, t.right), t.left, t.right);
      const __m512 lower = _mm512_mask_blend_ps(beats16(b.left, b.right), b.left, b.right);
      _mm512_mask_storeu_ps(y + q, first_lanes16(n),
                            _mm512_mask_blend_ps(beats16(upper, lower), upper, lower));
    }
  }
}

LT_AVX512 void backward_avx512(const float* x, const float* gy, int64_t w, int64_t oh, int64_t ow,
                               float* gx) {
  for (int64_t i = 0; i < oh; ++i, gy += ow) {
    const float* top = x + 2 * i * w;
    float* gtop = gx + 2 * i * w;
    for (int64_t q = 0; q < ow; q += 16) {
      const int64_t n = std::min<int64_t>(16, ow - q);
      const TapPairs16 t = load_tap_pairs16(top + 2 * q, n);
      const TapPairs16 b = load_tap_pairs16(top + w + 2 * q, n);
      const __mmask16 top_right = beats16(t.left, t.right);
      const __mmask16 bottom_right = beats16(b.left, b.right);
      const __m512 upper = _mm512_mask_blend_ps(top_right, t.left, t.right);
      const __m512 lower = _mm512_mask_blend_ps(bottom_right, b.left, b.right);
      const __mmask16 in_bottom = beats16(upper, lower);
      const __m512 g = _mm512_maskz_loadu_ps(first_lanes16(n), gy + q);
      store_tap_pairs16(gtop + 2 * q, n, _mm512_maskz_mov_ps(~in_bottom & ~top_right, g),
                        _mm512_maskz_mov_ps(~in_bottom & top_right, g));
      store_tap_pairs16(gtop + w + 2 * q, n, _mm512_maskz_mov_ps(in_bottom & ~bottom_right, g),
                        _mm512_maskz_mov_ps(in_bottom & bottom_right, g));
    }
  }
}

// --- Choosing ------------------------------------------------------------------------------------

std::vector<MaxPoolRows> detect() {
  std::vector<MaxPoolRows> v{{"portable", max_plane_2x2<float>, max_plane_grad_2x2<float>}};
  // __builtin_cpu_supports also checks that the OS saves the wide registers (XGETBV).
  if (__builtin_cpu_supports("avx2")) v.push_back({"avx2", forward_avx2, backward_avx2});
  if (__builtin_cpu_supports("avx512f")) v.push_back({"avx512", forward_avx512, backward_avx512});
  return v;
}

const std::vector<MaxPoolRows>& variants() {
  static const std::vector<MaxPoolRows> v = detect();
  return v;
}

std::atomic<const MaxPoolRows*> chosen{nullptr};

}  // namespace

std::span<const MaxPoolRows> max_pool_rows_variants() { return variants(); }

const MaxPoolRows& max_pool_rows() {
  const MaxPoolRows* r = chosen.load(std::memory_order_acquire);
  return r ? *r : variants().back();
}

void use_max_pool_rows(std::string_view isa) {
  for (const MaxPoolRows& r : variants())
    if (isa == r.isa) return chosen.store(&r, std::memory_order_release);
  std::string have;
  for (const MaxPoolRows& r : variants()) have += (have.empty() ? "" : ", ") + std::string(r.isa);
  throw Error(fmt::format("max pool rows: this CPU does not run '{}' (it runs {})", isa, have));
}

}  // namespace lt::rt
