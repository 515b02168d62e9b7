// The rows of the 2x2 / stride-2 / unpadded max pool (pool.cpp's fast path), and the f32 variants
// of them picked by CPU features at run time: AVX-512, AVX2, or the portable rows below. A binary
// built on one x86-64 CPU runs the best rows the CPU it runs on has. Kernel-internal.
//
// These windows tile the plane, so forward and backward are one pass over pairs of input rows:
// no -inf fill, no scatter, and the backward writes each input gradient exactly once (0 or the
// window's gy). Window rows hold taps (a0 a1 / b0 b1) in row-major order. "First maximum wins, the
// first NaN wins over numbers" picks the leftmost element of the order NaN > numbers (equal
// numbers, +0 and -0 included, tie), and a leftmost-winner reduction can be bracketed any way that
// keeps the operands in order: max(max(a0, a1), max(b0, b1)) gives the same element (value and
// index) as a scan a0, a1, b0, b1. Every variant gives the same bits.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace lt::rt {

/// Whether a later tap v takes the window from the current maximum m: v > m, or v is the first
/// NaN. Returned as 0/1 for index arithmetic: the portable rows select taps by index, never with
/// a branch, because random data would mispredict half of the branches.
template <class T>
int64_t pool_beats(T m, T v) {
  return !(v <= m) & (m == m);
}

/// Offset from top[2q] of the maximum of window q, whose bottom row starts `stride` after top.
template <class T>
int64_t argmax_2x2(const T* top, int64_t stride, int64_t q) {
  const T* bottom = top + stride;
  const int64_t top_k = pool_beats(top[2 * q], top[2 * q + 1]);
  const int64_t bottom_k = pool_beats(bottom[2 * q], bottom[2 * q + 1]);
  const int64_t in_bottom = pool_beats(top[2 * q + top_k], bottom[2 * q + bottom_k]);
  return top_k + in_bottom * (stride + bottom_k - top_k);
}

/// One plane: y row i (ow windows) is the max over x rows 2i and 2i + 1 (w wide), for i < oh.
template <class T>
void max_plane_2x2(const T* x, int64_t w, int64_t oh, int64_t ow, T* y) {
  for (int64_t i = 0; i < oh; ++i, y += ow) {
    const T* top = x + 2 * i * w;
    for (int64_t q = 0; q < ow; ++q) y[q] = top[2 * q + argmax_2x2(top, w, q)];
  }
}

/// One plane's gradient: the first 2 * ow inputs of x rows 2i and 2i + 1 get gy at their
/// window's maximum and 0 at its other three taps, for i < oh (an odd trailing column or row
/// stays unwritten).
template <class T>
void max_plane_grad_2x2(const T* x, const T* gy, int64_t w, int64_t oh, int64_t ow, T* gx) {
  for (int64_t i = 0; i < oh; ++i, gy += ow) {
    const T* top = x + 2 * i * w;
    T* gtop = gx + 2 * i * w;
    for (int64_t q = 0; q < ow; ++q) {
      T* gwin = gtop + 2 * q;
      gwin[0] = gwin[1] = gwin[w] = gwin[w + 1] = T(0);
      gwin[argmax_2x2(top, w, q)] = gy[q];
    }
  }
}

/// The f32 planes with one instruction set.
struct MaxPoolRows {
  const char* isa;  // "portable", "avx2" or "avx512"
  void (*forward)(const float* x, int64_t w, int64_t oh, int64_t ow, float* y);
  void (*backward)(const float* x, const float* gy, int64_t w, int64_t oh, int64_t ow, float* gx);
};

/// The variants this CPU runs, portable first and fastest last.
std::span<const MaxPoolRows> max_pool_rows_variants();

/// The variant max_pool2d and its gradient use: the fastest, unless use_max_pool_rows chose one.
const MaxPoolRows& max_pool_rows();

/// Makes max_pool2d use the variant named `isa` from now on (tests and benchmarks compare them);
/// lt::Error when this CPU does not run it.
void use_max_pool_rows(std::string_view isa);

}  // namespace lt::rt
