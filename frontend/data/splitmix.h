// splitmix64: tiny, fast and fully specified, unlike std:: distributions, whose output differs
// between standard libraries. The data pipeline's draws (shuffles, augmentation) use it, so the
// same seed gives the same data everywhere.
#pragma once
#include <cstdint>

namespace lt::data {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A value in [0, n) from 64 random bits (multiply-shift; the bias, < n / 2^64, is irrelevant).
inline uint64_t below(uint64_t& state, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(splitmix64(state)) * n) >> 64);
}

}  // namespace lt::data
