// 2-D max and average pooling (NCHW) and their gradients. Every (image, channel) plane is
// independent, so planes are the unit of parallel work; windows that overlap inside a plane
// accumulate on one thread.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

struct PoolGeom {
  int64_t planes, h, w;  // input planes (N * C) of h x w
  int64_t oh, ow;
  int64_t kh, kw, sh, sw, ph, pw;
  bool ceil_mode, count_include_pad;

  // The window of output (y, x), clipped to the input: rows [h0, h1), cols [w0, w1).
  void window(int64_t y, int64_t x, int64_t* h0, int64_t* h1, int64_t* w0, int64_t* w1) const {
    const int64_t hs = y * sh - ph, ws = x * sw - pw;
    *h0 = std::max<int64_t>(0, hs);
    *h1 = std::min(h, hs + kh);
    *w0 = std::max<int64_t>(0, ws);
    *w1 = std::min(w, ws + kw);
  }

  // The output columns [lo, hi) whose window tap j lands inside the input row.
  void tap_cols(int64_t j, int64_t* lo, int64_t* hi) const {
    auto ceil_div_pos = [](int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; };
    *lo = std::min(ow, ceil_div_pos(pw - j, sw));
    *hi = std::max(*lo, std::min(ow, ceil_div_pos(w + pw - j, sw)));
  }
};

/// Calls f(y_row, x_row_offset, lo, hi) for every output row and in-bounds window tap: output
/// column q (lo <= q < hi) reads input x_row_offset + q * sw. Taps go in row-major window order,
/// and whole rows at a time vectorize where a loop per window would not.
template <class F>
void for_each_tap(const PoolGeom& g, int64_t y, F&& f) {
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = y * g.sh - g.ph + i;
    if (ih < 0 || ih >= g.h) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      int64_t lo, hi;
      g.tap_cols(j, &lo, &hi);
      f(ih * g.w + j - g.pw, lo, hi);
    }
  }
}

PoolGeom make_geom(const Shape& x, const Shape& y, const ir::PoolAttrs& a) {
  return {x[0] * x[1], x[2],        x[3],        y[2],         y[3],
          a.kernel[0], a.kernel[1], a.stride[0], a.stride[1], a.padding[0],
          a.padding[1], a.ceil_mode, a.count_include_pad};
}

/// Calls f(plane) for every plane, in parallel chunks of a few thousand window taps.
template <class F>
void over_planes(const PoolGeom& g, F&& f) {
  const int64_t work = std::max<int64_t>(1, g.oh * g.ow * g.kh * g.kw + g.h * g.w);
  parallel_for(g.planes, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) f(p);
  });
}

/// Index into the plane of the window's maximum: the first one in row-major window order, or the
/// first NaN (NaN propagates as in PyTorch). Padding is -inf, so it never wins; -1 when the
/// clipped window is empty.
template <class T>
int64_t argmax_window(const PoolGeom& g, const T* x, int64_t y, int64_t xo) {
  int64_t h0, h1, w0, w1;
  g.window(y, xo, &h0, &h1, &w0, &w1);
  int64_t best_i = -1;
  T best = -std::numeric_limits<T>::infinity();
  for (int64_t i = h0; i < h1; ++i)
    for (int64_t j = w0; j < w1; ++j) {
      const T v = x[i * g.w + j];
      if (best_i < 0 || v > best || (std::isnan(v) && !std::isnan(best))) {
        best = v;
        best_i = i * g.w + j;
      }
    }
  return best_i;
}

// Every window holds at least one input pixel (the shape rule keeps padding <= kernel / 2), so
// starting from -inf and skipping padded taps is "padding counts as -inf".
template <class T>
void max_forward(const PoolGeom& g, const T* x, T* y) {
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      T* yr = y + (p * g.oh + i) * g.ow;
      std::fill(yr, yr + g.ow, -std::numeric_limits<T>::infinity());
      for_each_tap(g, i, [&](int64_t off, int64_t lo, int64_t hi) {
        for (int64_t q = lo; q < hi; ++q) {
          const T v = xp[off + q * g.sw];
          yr[q] = (v > yr[q] || std::isnan(v)) ? v : yr[q];  // a NaN sticks
        }
      });
    }
  });
}

template <class T>
void max_backward(const PoolGeom& g, const T* x, const T* gy, T* gx) {
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    const T* gyp = gy + p * g.oh * g.ow;
    T* gxp = gx + p * g.h * g.w;
    std::fill(gxp, gxp + g.h * g.w, T(0));
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t at = argmax_window(g, xp, i, j);
        if (at >= 0) gxp[at] += gyp[i * g.ow + j];
      }
  });
}

// --- The 2x2 / stride 2 / no padding fast path ---------------------------------------------------
//
// These windows tile the plane, so forward and backward are one pass over pairs of input rows:
// no -inf fill, no scatter, and the backward writes each input gradient exactly once (0 or the
// window's gy), so the gradient needs no memset. Window rows hold taps (a0 a1 / b0 b1) in row-major
// order. "First maximum wins, the first NaN wins over numbers" picks the leftmost element of the
// order NaN > numbers (equal numbers, +0 and -0 included, tie), and a leftmost-winner reduction can
// be bracketed any way that keeps the operands in order: max(max(a0, a1), max(b0, b1)) gives the
// same element (value and index) as the general path's scan a0, a1, b0, b1.

bool is_2x2_tiling(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
         2 * g.oh <= g.h && 2 * g.ow <= g.w;  // ceil_mode's overhanging windows do not tile
}

/// Whether a later tap v takes the window from the current maximum m: v > m, or v is the first
/// NaN. Returned as 0/1 for index arithmetic: the scalar rows below select taps by index, never
/// with a branch, because random data would mispredict half of the branches.
template <class T>
int64_t beats(T m, T v) {
  return !(v <= m) & (m == m);
}

/// Offset from top[2q] of the maximum of window q, whose bottom row starts `stride` after top.
template <class T>
int64_t argmax_2x2(const T* top, int64_t stride, int64_t q) {
  const T* bottom = top + stride;
  const int64_t top_k = beats(top[2 * q], top[2 * q + 1]);
  const int64_t bottom_k = beats(bottom[2 * q], bottom[2 * q + 1]);
  const int64_t in_bottom = beats(top[2 * q + top_k], bottom[2 * q + bottom_k]);
  return top_k + in_bottom * (stride + bottom_k - top_k);
}

/// y[q] = max of the window over top[2q, 2q+1] and top[stride + 2q, stride + 2q + 1], q < ow.
template <class T>
void max_row_2x2(const T* top, int64_t stride, int64_t ow, T* y) {
  for (int64_t q = 0; q < ow; ++q) y[q] = top[2 * q + argmax_2x2(top, stride, q)];
}

/// Writes the gradients of the 2*ow inputs of the row pair at top (gx rows at gtop, the same
/// stride apart): gy[q] at window q's maximum, 0 at its other three taps.
template <class T>
void max_grad_row_2x2(const T* top, int64_t stride, const T* gy, int64_t ow, T* gtop) {
  for (int64_t q = 0; q < ow; ++q) {
    T* gwin = gtop + 2 * q;
    gwin[0] = gwin[1] = gwin[stride] = gwin[stride + 1] = T(0);
    gwin[argmax_2x2(top, stride, q)] = gy[q];
  }
}

#if defined(__AVX512F__)
// f32 rows with AVX-512: 16 windows per step, and masked loads/stores for the last (usually
// partial: rows are 7 or 14 windows in the CNN) step, where the compiler's own vectorization
// would fall back to a scalar epilogue for most of a short row. Masked-off lanes are never
// touched (AVX-512 suppresses their faults). These overloads win over the templates for float.

/// The first n lanes (none for n <= 0, all 16 for n >= 16).
__mmask16 first_lanes(int64_t n) {
  if (n <= 0) return 0;
  return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

/// Taps 2q (left) and 2q+1 (right) of the n <= 16 windows starting at row[0], lane q.
struct TapPairs {
  __m512 left, right;
};

TapPairs load_tap_pairs(const float* row, int64_t n) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 lo = _mm512_maskz_loadu_ps(first_lanes(2 * n), row);
  const __m512 hi = _mm512_maskz_loadu_ps(first_lanes(2 * n - 16), row + 16);
  return {_mm512_permutex2var_ps(lo, even, hi), _mm512_permutex2var_ps(lo, odd, hi)};
}

/// beats() per lane: !(v <= m) where m is not NaN.
__mmask16 beats16(__m512 m, __m512 v) {
  return _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(m, m, _CMP_ORD_Q), v, m, _CMP_NLE_UQ);
}

/// Stores lanes 2q = left[q], 2q+1 = right[q] for the first 2n values.
void store_tap_pairs(float* row, int64_t n, __m512 left, __m512 right) {
  const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  _mm512_mask_storeu_ps(row, first_lanes(2 * n), _mm512_permutex2var_ps(left, lo, right));
  _mm512_mask_storeu_ps(row + 16, first_lanes(2 * n - 16), _mm512_permutex2var_ps(left, hi, right));
}

void max_row_2x2(const float* top, int64_t stride, int64_t ow, float* y) {
  for (int64_t q = 0; q < ow; q += 16) {
    const int64_t n = std::min<int64_t>(16, ow - q);
    const TapPairs t = load_tap_pairs(top + 2 * q, n), b = load_tap_pairs(top + stride + 2 * q, n);
    const __m512 upper = _mm512_mask_blend_ps(beats16(t.left, t.right), t.left, t.right);
    const __m512 lower = _mm512_mask_blend_ps(beats16(b.left, b.right), b.left, b.right);
    _mm512_mask_storeu_ps(y + q, first_lanes(n),
                          _mm512_mask_blend_ps(beats16(upper, lower), upper, lower));
  }
}

void max_grad_row_2x2(const float* top, int64_t stride, const float* gy, int64_t ow,
                      float* gtop) {
  for (int64_t q = 0; q < ow; q += 16) {
    const int64_t n = std::min<int64_t>(16, ow - q);
    const TapPairs t = load_tap_pairs(top + 2 * q, n), b = load_tap_pairs(top + stride + 2 * q, n);
    const __mmask16 top_right = beats16(t.left, t.right);
    const __mmask16 bottom_right = beats16(b.left, b.right);
    const __m512 upper = _mm512_mask_blend_ps(top_right, t.left, t.right);
    const __m512 lower = _mm512_mask_blend_ps(bottom_right, b.left, b.right);
    const __mmask16 in_bottom = beats16(upper, lower);
    const __m512 gq = _mm512_maskz_loadu_ps(first_lanes(n), gy + q);
    store_tap_pairs(gtop + 2 * q, n, _mm512_maskz_mov_ps(~in_bottom & ~top_right, gq),
                    _mm512_maskz_mov_ps(~in_bottom & top_right, gq));
    store_tap_pairs(gtop + stride + 2 * q, n, _mm512_maskz_mov_ps(in_bottom & ~bottom_right, gq),
                    _mm512_maskz_mov_ps(in_bottom & bottom_right, gq));
  }
}
#endif

template <class T>
void max_forward_2x2(const PoolGeom& g, const T* x, T* y) {
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    T* yp = y + p * g.oh * g.ow;
    for (int64_t i = 0; i < g.oh; ++i) max_row_2x2(xp + 2 * i * g.w, g.w, g.ow, yp + i * g.ow);
  });
}

// An odd trailing column or row is in no window: its gradient is written as 0 here, the only
// part of the plane that the rows do not write.
template <class T>
void max_backward_2x2(const PoolGeom& g, const T* x, const T* gy, T* gx) {
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    const T* gyp = gy + p * g.oh * g.ow;
    T* gxp = gx + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      T* gtop = gxp + 2 * i * g.w;
      max_grad_row_2x2(xp + 2 * i * g.w, g.w, gyp + i * g.ow, g.ow, gtop);
      if (g.w % 2 != 0) gtop[g.w - 1] = gtop[2 * g.w - 1] = T(0);
    }
    if (g.h % 2 != 0) std::fill(gxp + (g.h - 1) * g.w, gxp + g.h * g.w, T(0));
  });
}

/// The divisor's extent at each output index along one dim, PyTorch's: the window clipped to
/// the padded input (count_include_pad; kernel size unless ceil_mode overhangs) or to the input.
std::vector<int64_t> extents(int64_t outs, int64_t s, int64_t p, int64_t k, int64_t n,
                             bool include_pad) {
  std::vector<int64_t> ext(outs);
  for (int64_t o = 0; o < outs; ++o) {
    int64_t lo = o * s - p, hi = std::min(lo + k, n + p);
    if (!include_pad) lo = std::max<int64_t>(lo, 0), hi = std::min(hi, n);
    ext[o] = hi - lo;
  }
  return ext;
}

/// 1 / the divisor of output (i, q): rows[i] * cols[q] taps.
template <class T>
struct AvgScale {
  std::vector<int64_t> rows, cols;
  explicit AvgScale(const PoolGeom& g)
      : rows(extents(g.oh, g.sh, g.ph, g.kh, g.h, g.count_include_pad)),
        cols(extents(g.ow, g.sw, g.pw, g.kw, g.w, g.count_include_pad)) {}
  T operator()(int64_t i, int64_t q) const { return T(1) / static_cast<T>(rows[i] * cols[q]); }
};

// Padded taps count as zeros; the divisor is AvgScale's.
template <class T>
void avg_forward(const PoolGeom& g, const T* x, T* y) {
  const AvgScale<T> scale(g);
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    for (int64_t i = 0; i < g.oh; ++i) {
      T* yr = y + (p * g.oh + i) * g.ow;
      std::fill(yr, yr + g.ow, T(0));
      for_each_tap(g, i, [&](int64_t off, int64_t lo, int64_t hi) {
        for (int64_t q = lo; q < hi; ++q) yr[q] += xp[off + q * g.sw];
      });
      for (int64_t q = 0; q < g.ow; ++q) yr[q] *= scale(i, q);
    }
  });
}

template <class T>
void avg_backward(const PoolGeom& g, const T* gy, T* gx) {
  const AvgScale<T> scale(g);
  over_planes(g, [&](int64_t p) {
    T* gxp = gx + p * g.h * g.w;
    std::fill(gxp, gxp + g.h * g.w, T(0));
    std::vector<T> gs(g.ow);  // the row of gy, scaled
    for (int64_t i = 0; i < g.oh; ++i) {
      const T* gyr = gy + (p * g.oh + i) * g.ow;
      for (int64_t q = 0; q < g.ow; ++q) gs[q] = gyr[q] * scale(i, q);
      for_each_tap(g, i, [&](int64_t off, int64_t lo, int64_t hi) {
        for (int64_t q = lo; q < hi; ++q) gxp[off + q * g.sw] += gs[q];
      });
    }
  });
}

}  // namespace

void max_pool2d(const ir::PoolAttrs& a, Ins in, Outs out) {
  const PoolGeom g = make_geom(in[0].shape(), out[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    if (is_2x2_tiling(g)) max_forward_2x2<T>(g, in[0].as<const T>(), out[0].as<T>());
    else max_forward<T>(g, in[0].as<const T>(), out[0].as<T>());
  });
}

void max_pool2d_grad(const ir::PoolAttrs& a, Ins in, Outs out) {
  const PoolGeom g = make_geom(in[0].shape(), in[1].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    const T* x = in[0].as<const T>();
    const T* gy = in[1].as<const T>();
    if (is_2x2_tiling(g)) max_backward_2x2<T>(g, x, gy, out[0].as<T>());
    else max_backward<T>(g, x, gy, out[0].as<T>());
  });
}

void avg_pool2d(const ir::PoolAttrs& a, Ins in, Outs out) {
  const PoolGeom g = make_geom(in[0].shape(), out[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    avg_forward<T>(g, in[0].as<const T>(), out[0].as<T>());
  });
}

void avg_pool2d_grad(const ir::PoolAttrs& a, Ins in, Outs out) {
  const PoolGeom g = make_geom(out[0].shape(), in[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    avg_backward<T>(g, in[0].as<const T>(), out[0].as<T>());
  });
}

}  // namespace lt::rt
