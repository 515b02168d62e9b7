// Counter-based random numbers (Philox4x32-10, Salmon et al. 2011). Element i of a draw with
// (key, counter) depends only on those three numbers, so eager mode, lazy mode and every rank
// produce the same values.
#pragma once
#include <array>
#include <cstdint>

namespace lt::rt {

std::array<uint32_t, 4> philox4x32(uint64_t counter, uint64_t key);

/// Fills out[0..n) with U[0,1) (uniform) or N(0,1) (normal, Box-Muller) for draw (key, counter).
void philox_uniform(uint64_t key, uint64_t counter, float* out, int64_t n);
void philox_uniform(uint64_t key, uint64_t counter, double* out, int64_t n);
void philox_normal(uint64_t key, uint64_t counter, float* out, int64_t n);
void philox_normal(uint64_t key, uint64_t counter, double* out, int64_t n);

/// Counter values one draw of n elements consumes (4 per Philox block).
inline uint64_t philox_blocks(int64_t n) { return static_cast<uint64_t>((n + 3) / 4); }

}  // namespace lt::rt
