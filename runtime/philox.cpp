#include "runtime/philox.h"

#include <cmath>
#include <utility>

#include "runtime/thread_pool.h"

namespace lt::rt {

std::array<uint32_t, 4> philox4x32(uint64_t counter, uint64_t key) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{0xD2511F53} * c0;
    const uint64_t p1 = uint64_t{0xCD9E8D57} * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    // The reference round: (c0,c1,c2,c3) = (hi1^c1^k0, lo1, hi0^c3^k1, lo0).
    c0 = n0;
    c1 = static_cast<uint32_t>(p1);
    c2 = n2;
    c3 = static_cast<uint32_t>(p0);
    k0 += 0x9E3779B9;  // the key schedule bumps between rounds
    k1 += 0xBB67AE85;
  }
  return {c0, c1, c2, c3};
}

namespace {

template <class T>
T to_unit(uint32_t a, uint32_t b) {
  if constexpr (sizeof(T) == 4) {
    (void)b;
    return static_cast<float>(a >> 8) * (1.0f / 16777216.0f);
  } else {
    const uint64_t bits = (uint64_t{a} << 21) ^ (b >> 11);
    return static_cast<double>(bits & ((uint64_t{1} << 53) - 1)) * (1.0 / 9007199254740992.0);
  }
}

template <class T, bool kNormal>
void fill(uint64_t key, uint64_t counter, T* out, int64_t n) {
  parallel_for(philox_blocks(n), 4096, [&](int64_t b, int64_t e) {
    for (int64_t blk = b; blk < e; ++blk) {
      const auto r = philox4x32(counter + static_cast<uint64_t>(blk), key);
      T v[4];
      if constexpr (kNormal) {
        for (int j = 0; j < 4; j += 2) {
          // Box-Muller on (u1, u2); 1 - u keeps the log argument in (0, 1].
          const T u1 = T(1) - to_unit<T>(r[j], r[j + 1]);
          const T u2 = to_unit<T>(r[j + 1], r[j]);
          const T rad = std::sqrt(T(-2) * std::log(u1));
          v[j] = rad * std::cos(T(2 * M_PI) * u2);
          v[j + 1] = rad * std::sin(T(2 * M_PI) * u2);
        }
      } else {
        for (int j = 0; j < 4; ++j) v[j] = to_unit<T>(r[j], r[(j + 1) & 3]);
      }
      for (int j = 0; j < 4 && blk * 4 + j < n; ++j) out[blk * 4 + j] = v[j];
    }
  });
}

}  // namespace

void philox_uniform(uint64_t key, uint64_t counter, float* out, int64_t n) {
  fill<float, false>(key, counter, out, n);
}
void philox_uniform(uint64_t key, uint64_t counter, double* out, int64_t n) {
  fill<double, false>(key, counter, out, n);
}
void philox_normal(uint64_t key, uint64_t counter, float* out, int64_t n) {
  fill<float, true>(key, counter, out, n);
}
void philox_normal(uint64_t key, uint64_t counter, double* out, int64_t n) {
  fill<double, true>(key, counter, out, n);
}

}  // namespace lt::rt
