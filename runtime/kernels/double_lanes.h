// Vectors of 8 doubles for the norm kernels' sums, in the GCC and clang vector extensions:
// written as plain loops over a double array GCC 12 ran them scalar, one conversion and one add
// per element, even at -O3 (the widening from float defeats its vectorizer). And the exact
// widening of the bf16 and f16 inputs the norm kernels read (the FloatWidensFirst rows).
// Kernel-internal.
#pragma once
#include <Eigen/Core>
#include <algorithm>
#include <immintrin.h>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace lt::rt {

inline constexpr int kVec = 8;  // doubles per vector
using VecD = double __attribute__((vector_size(kVec * sizeof(double))));
using VecF = float __attribute__((vector_size(kVec * sizeof(float))));

// p[0, kVec) as doubles. Vectors go by reference: passing one by value would change the calling
// convention on CPUs without AVX-512 (and GCC warns about it).
inline void load_wide(const float* p, VecD& out) {
  VecF v;
  std::memcpy(&v, p, sizeof v);
  out = __builtin_convertvector(v, VecD);
}
inline void load_wide(const double* p, VecD& out) { std::memcpy(&out, p, sizeof out); }
// bf16 is the high half of an f32: a shift widens it, exactly. With AVX-512 that is four
// instructions (GCC 12 made a dozen of the vector extensions' form below, and the sums that
// read bf16 then ran slower than on f32).
inline void load_wide(const Eigen::bfloat16* p, VecD& out) {
#if defined(__AVX512F__)
  const __m256i w = _mm256_slli_epi32(
      _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16);
  const __m512d d = _mm512_cvtps_pd(_mm256_castsi256_ps(w));
  std::memcpy(&out, &d, sizeof out);
#else
  using VecH = uint16_t __attribute__((vector_size(kVec * sizeof(uint16_t))));
  using VecW = uint32_t __attribute__((vector_size(kVec * sizeof(uint32_t))));
  VecH h;
  std::memcpy(&h, p, sizeof h);
  const VecW w = __builtin_convertvector(h, VecW) << 16;
  VecF f;
  std::memcpy(&f, &w, sizeof f);
  out = __builtin_convertvector(f, VecD);
#endif
}
// f16 through F16C where the build has it: Eigen's conversion is a software routine.
inline void load_wide(const Eigen::half* p, VecD& out) {
#if defined(__F16C__)
  const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  VecF v;
  std::memcpy(&v, &f, sizeof v);
  out = __builtin_convertvector(v, VecD);
#else
  for (int i = 0; i < kVec; ++i) out[i] = static_cast<float>(p[i]);
#endif
}

/// out[0, n) = p[0, n) as floats (F16C where the build has it).
inline void widen_half(const Eigen::half* p, float* out, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
#endif
  for (; i < n; ++i) out[i] = static_cast<float>(p[i]);
}

/// Calls f(xs, e0, e1) over [0, n) of x, where xs[e - e0] is element e: x itself in one call,
/// or for f16 chunks widened to floats first, so that f's loop vectorizes (load_as below widens
/// bf16 inline, but f16 only element by element).
template <class X, class F>
void in_wide_chunks(const X* x, int64_t n, F&& f) {
  if constexpr (std::is_same_v<X, Eigen::half>) {
    constexpr int64_t kChunk = 1024;
    float buf[kChunk];
    for (int64_t e0 = 0; e0 < n; e0 += kChunk) {
      const int64_t e1 = std::min(n, e0 + kChunk);
      widen_half(x + e0, buf, e1 - e0);
      f(static_cast<const float*>(buf), e0, e1);
    }
  } else {
    f(x, int64_t{0}, n);
  }
}

/// Element e of p as T (exact for the narrow types). bf16 goes through its bits, which loops
/// vectorize; Eigen's conversion operator kept GCC 12 from vectorizing them.
template <class T, class X>
T load_as(const X* p, int64_t e) {
  if constexpr (std::is_same_v<X, Eigen::bfloat16>) {
    uint16_t h;
    std::memcpy(&h, p + e, sizeof h);
    const uint32_t w = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &w, sizeof f);
    return f;
  } else {
    return static_cast<T>(p[e]);
  }
}

/// The bf16 bits of the f32 with bits b, rounded as a cast rounds: to nearest even, and where
/// `nan` is all ones (the value is a NaN) to the quiet NaN of its sign. U is uint32_t, or a
/// vector of them in the vector extensions (with `nan` a lane mask).
template <class U>
U bf16_bits(U b, U nan) {
  const U rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  const U quiet = ((b >> 16) & 0x8000u) | 0x7fc0u;
  return (rounded & ~nan) | (quiet & nan);
}

/// p[e] = v, v rounded to p's type where that is bf16 (bf16_bits), through its bits, which loops
/// vectorize.
template <class D, class T>
void store_as(D* p, int64_t e, T v) {
  if constexpr (std::is_same_v<D, Eigen::bfloat16>) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    const uint32_t nan = v != v ? ~0u : 0u;
    reinterpret_cast<uint16_t*>(p)[e] = static_cast<uint16_t>(bf16_bits(b, nan));
  } else {
    p[e] = static_cast<D>(v);
  }
}

}  // namespace lt::rt
