// Batch norm's passes over rows of channels: x is [n, c] ([N, C], or channels-last images with
// n = N * H * W), channel j every c elements. Sums are in double and go over fixed blocks of rows
// (set by n and c alone), added in block order, so results do not depend on the thread count.
// Kernel-internal (norm.cpp); T is float or double, and X, x's element type, is T or (with T
// float) bf16 or f16, read widened.
#pragma once
#include <cstdint>
#include <vector>

namespace lt::rt {

/// Per channel, in one pass: sum_d = the sum of d = x - shift and sum_d2 that of d^2. With shift
/// one row of x, d is of the order of the channel's spread, so the variance sum_d2 / n -
/// (sum_d / n)^2 keeps its digits in double even when the mean is far from 0.
template <class X>
void row_channel_moments(const X* x, int64_t n, int64_t c, const X* shift, double* sum_d,
                         double* sum_d2);

/// Per channel: sum_gy = sum of gy, sum_gy_dev = sum of gy * (x - mean).
template <class T, class X>
void row_channel_grad_sums(const T* gy, const X* x, int64_t n, int64_t c, const T* mean,
                           double* sum_gy, double* sum_gy_dev);

/// y = x * scale + shift, per channel.
template <class T, class X>
void row_channel_affine(const X* x, T* y, int64_t n, int64_t c, const T* scale, const T* shift);

/// dx = gy * a + (x - mu) * b + k, per channel; D is T, or bf16 (the value in T rounded).
template <class T, class X, class D>
void row_channel_grad_apply(const T* gy, const X* x, D* dx, int64_t n, int64_t c, const T* a,
                            const T* mu, const T* b, const T* k);

}  // namespace lt::rt
