// Softmax over contiguous f32 rows, several rows at a time (kernel-internal: nn.cpp).
#pragma once
#include <cstdint>

namespace lt::rt {

/// Whether softmax_rows_f32 takes rows of n on this build (AVX-512, n a multiple of 16 up to 128).
bool softmax_rows_f32_fits(int64_t n);

/// y[r] = softmax(x[r]) for rows [r0, r1) of n floats, on the calling thread: exp(x - max) by
/// Eigen's packet exp, exactly 0 where x - max is below log of the smallest normal float (as
/// nn.cpp's assign_exp_or_zero), times 1 / sum.
void softmax_rows_f32(const float* x, float* y, int64_t r0, int64_t r1, int64_t n);

}  // namespace lt::rt
