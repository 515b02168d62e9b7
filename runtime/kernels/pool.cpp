// 2-D max and average pooling (NCHW; max pooling also channels-last) and their gradients. On
// NCHW every (image, channel) plane is independent, so planes are the unit of parallel work;
// windows that overlap inside a plane accumulate on one thread.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/kernels/library_kernels.h"
#include "runtime/kernels/pool_rows.h"
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

/// Calls f(plane) for every plane, in parallel chunks of a few thousand window taps; a
/// channels-last plane is an image of `channels` channels.
template <class F>
void over_planes(const PoolGeom& g, F&& f, int64_t channels = 1) {
  const int64_t work = std::max<int64_t>(1, (g.oh * g.ow * g.kh * g.kw + g.h * g.w) * channels);
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

// through_relu: a window whose maximum is not above 0 passes nothing (ir::PoolAttrs).
template <class T>
void max_backward(const PoolGeom& g, const T* x, const T* gy, T* gx, bool through_relu) {
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w;
    const T* gyp = gy + p * g.oh * g.ow;
    T* gxp = gx + p * g.h * g.w;
    std::fill(gxp, gxp + g.h * g.w, T(0));
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        const int64_t at = argmax_window(g, xp, i, j);
        if (at >= 0 && (!through_relu || xp[at] > T(0))) gxp[at] += gyp[i * g.ow + j];
      }
  });
}

// The 2x2 / stride 2 / no padding fast path: pool_rows.h. f32 takes the CPU's best variant.

bool is_2x2_tiling(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 &&
         2 * g.oh <= g.h && 2 * g.ow <= g.w;  // ceil_mode's overhanging windows do not tile
}

template <class T>
void max_forward_2x2(const PoolGeom& g, const T* x, T* y) {
  auto plane = max_plane_2x2<T>;
  if constexpr (std::is_same_v<T, float>) plane = max_pool_rows().forward;
  over_planes(g, [&](int64_t p) {
    plane(x + p * g.h * g.w, g.w, g.oh, g.ow, y + p * g.oh * g.ow);
  });
}

// An odd trailing column or row is in no window: its gradient is written as 0 here, the only
// part of the plane that the rows do not write. through_relu masks the plane while it is in
// cache: a pixel that took a gradient is its window's maximum, so x > 0 is the window's test.
template <class T>
void max_backward_2x2(const PoolGeom& g, const T* x, const T* gy, T* gx, bool through_relu) {
  auto plane = max_plane_grad_2x2<T>;
  if constexpr (std::is_same_v<T, float>) plane = max_pool_rows().backward;
  over_planes(g, [&](int64_t p) {
    T* gxp = gx + p * g.h * g.w;
    plane(x + p * g.h * g.w, gy + p * g.oh * g.ow, g.w, g.oh, g.ow, gxp);
    if (g.w % 2 != 0)
      for (int64_t r = 0; r < 2 * g.oh; ++r) gxp[r * g.w + g.w - 1] = T(0);
    if (g.h % 2 != 0) std::fill(gxp + (g.h - 1) * g.w, gxp + g.h * g.w, T(0));
    if (!through_relu) return;
    const T* xp = x + p * g.h * g.w;
    for (int64_t i = 0; i < g.h * g.w; ++i) gxp[i] = xp[i] > T(0) ? gxp[i] : T(0);
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

// Channels-last ([N, H, W, C]): the same windows, taps in the same row-major order, per channel;
// the channels are the contiguous, vectorized loop, and images the unit of parallel work. The
// rules are the 2x2 tiling's, so that the pool of a convolution's channels-last output gives
// the bits it gave on NCHW: ties and NaNs go to the first tap (the general NCHW forward keeps
// a window's last NaN), and a tiling's gradient is gy itself where an overlap must add to 0.
struct NhwcGeom {
  PoolGeom g;  // planes = N
  int64_t c;
};

NhwcGeom make_nhwc_geom(const Shape& x, const Shape& y, const ir::PoolAttrs& a) {
  return {make_geom({x[0], 1, x[1], x[2]}, {y[0], 1, y[1], y[2]}, a), x[3]};
}

// a, or b where it wins: larger, or the first NaN.
template <class T>
inline T first_max(T a, T b) {
  return ((b > a) | ((b != b) & (a == a))) ? b : a;  // no short circuit: no branches
}

// Whether x holds the window's winner m: the first NaN's place if m is NaN, else m's.
template <class T>
inline bool holds(T x, T m) {
  return ((m != m) & (x != x)) | (x == m);  // x == m is false where m is NaN
}

// 16 f32 channels at a time in GCC's vector extensions (GCC does not vectorize these selects
// on its own); the comparisons give lane masks. Whatever the build targets, 64-byte vectors
// compile to the widest registers it has.
using V16 = float __attribute__((vector_size(64)));
using M16 = int32_t __attribute__((vector_size(64)));
constexpr int64_t kLanes = 16;

inline V16 load16(const float* p) {
  V16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store16(float* p, V16 v) { std::memcpy(p, &v, sizeof v); }
inline V16 first_max(V16 a, V16 b) { return ((b > a) | ((b != b) & (a == a))) ? b : a; }
// Whether x replaces m as a window's winner: larger, or the first NaN (first_max's test).
inline M16 beats(V16 x, V16 m) { return ~(x <= m) & (m == m); }

// One 2x2 window's maxima over c channels: the taps t0..t3 in row-major order.
template <class T>
void window_max_2x2(const T* t0, const T* t1, const T* t2, const T* t3, T* y, int64_t c) {
  int64_t k = 0;
  if constexpr (std::is_same_v<T, float>)
    for (; k + kLanes <= c; k += kLanes)
      store16(y + k, first_max(first_max(first_max(load16(t0 + k), load16(t1 + k)),
                                         load16(t2 + k)), load16(t3 + k)));
  for (; k < c; ++k) y[k] = first_max(first_max(first_max(t0[k], t1[k]), t2[k]), t3[k]);
}

// One 2x2 window's gradient over c channels: the taps t0..t3, their gradients u0..u3. Relu:
// a window whose maximum is not above 0 passes nothing (through_relu).
template <bool Relu, class T>
void window_grad_2x2(const T* t0, const T* t1, const T* t2, const T* t3, const T* gy, T* u0,
                     T* u1, T* u2, T* u3, int64_t c) {
  int64_t k = 0;
  if constexpr (std::is_same_v<T, float>)
    for (; k + kLanes <= c; k += kLanes) {
      // The last tap to beat the running winner is the first that holds the window's maximum
      // (or its first NaN): the scalar loop's choice below, in half its operations.
      const V16 x0 = load16(t0 + k), x1 = load16(t1 + k), x2 = load16(t2 + k),
                x3 = load16(t3 + k), g = load16(gy + k), zero{};
      const M16 w1 = beats(x1, x0);
      V16 m = w1 ? x1 : x0;
      const M16 w2 = beats(x2, m);
      m = w2 ? x2 : m;
      const M16 w3 = beats(x3, m);
      // Every lane of `pass` set, or those whose window's maximum is above 0.
      const M16 pass = Relu ? M16((w3 ? x3 : m) > zero) : ~M16{};
      const M16 not3 = ~w3 & pass, neither = not3 & ~w2;
      store16(u0 + k, (neither & ~w1) ? g : zero);
      store16(u1 + k, (neither & w1) ? g : zero);
      store16(u2 + k, (not3 & w2) ? g : zero);
      store16(u3 + k, (w3 & pass) ? g : zero);
    }
  for (; k < c; ++k) {
    const T m = first_max(first_max(first_max(t0[k], t1[k]), t2[k]), t3[k]);
    const bool e0 = holds(t0[k], m), e1 = holds(t1[k], m), e2 = holds(t2[k], m);
    const bool pass = !Relu || m > T(0);
    const bool h0 = e0 & pass, h1 = !e0 & e1 & pass, h2 = !(e0 | e1) & e2 & pass,
               h3 = !(e0 | e1 | e2) & pass;
    u0[k] = h0 ? gy[k] : T(0);
    u1[k] = h1 ? gy[k] : T(0);
    u2[k] = h2 ? gy[k] : T(0);
    u3[k] = h3 ? gy[k] : T(0);
  }
}

template <class T>
void max_forward_nhwc(const NhwcGeom& n, const T* x, T* y) {
  const PoolGeom& g = n.g;
  const int64_t c = n.c;
  if (is_2x2_tiling(g)) {
    over_planes(g, [&](int64_t p) {
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          const T* t0 = x + ((p * g.h + 2 * i) * g.w + 2 * j) * c;  // the window's top left
          const T *t1 = t0 + c, *t2 = t0 + g.w * c, *t3 = t2 + c;
          T* yc = y + ((p * g.oh + i) * g.ow + j) * c;
          window_max_2x2(t0, t1, t2, t3, yc, c);
        }
    }, c);
    return;
  }
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w * c;
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        T* yc = y + ((p * g.oh + i) * g.ow + j) * c;
        int64_t h0, h1, w0, w1;
        g.window(i, j, &h0, &h1, &w0, &w1);
        std::copy(xp + (h0 * g.w + w0) * c, xp + (h0 * g.w + w0 + 1) * c, yc);
        for (int64_t r = h0; r < h1; ++r)
          for (int64_t q = w0; q < w1; ++q) {
            const T* xc = xp + (r * g.w + q) * c;
            for (int64_t k = 0; k < c; ++k) yc[k] = first_max(yc[k], xc[k]);
          }
      }
  }, c);
}


// Each output's gradient goes to its window's argmax_window tap, channel by channel: the
// window's winner first, then the first tap that holds it takes the gradient; the loops over
// the contiguous channels have no branches. Outputs go in row-major order, as the planes' kernel
// adds them where windows overlap.
template <bool Relu, class T>
void max_backward_nhwc(const NhwcGeom& n, const T* x, const T* gy, T* gx) {
  const PoolGeom& g = n.g;
  const int64_t c = n.c;
  if (is_2x2_tiling(g)) {
    over_planes(g, [&](int64_t p) {
      T* gxp = gx + p * g.h * g.w * c;
      // Rows and columns in no window (odd sizes) get 0; every other pixel is written below.
      if (g.h % 2 != 0 || g.w % 2 != 0) std::fill(gxp, gxp + g.h * g.w * c, T(0));
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          const int64_t top_left = ((p * g.h + 2 * i) * g.w + 2 * j) * c;
          const T* t0 = x + top_left;
          const T *t1 = t0 + c, *t2 = t0 + g.w * c, *t3 = t2 + c;
          T* u0 = gx + top_left;
          T *u1 = u0 + c, *u2 = u0 + g.w * c, *u3 = u2 + c;
          window_grad_2x2<Relu>(t0, t1, t2, t3, gy + ((p * g.oh + i) * g.ow + j) * c, u0, u1, u2,
                                u3, c);
        }
    }, c);
    return;
  }
  over_planes(g, [&](int64_t p) {
    const T* xp = x + p * g.h * g.w * c;
    T* gxp = gx + p * g.h * g.w * c;
    std::fill(gxp, gxp + g.h * g.w * c, T(0));
    std::vector<T> best(static_cast<size_t>(c));
    std::vector<char> taken(static_cast<size_t>(c));
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        int64_t h0, h1, w0, w1;
        g.window(i, j, &h0, &h1, &w0, &w1);
        std::copy(xp + (h0 * g.w + w0) * c, xp + (h0 * g.w + w0 + 1) * c, best.begin());
        for (int64_t r = h0; r < h1; ++r)
          for (int64_t q = w0; q < w1; ++q) {
            const T* xc = xp + (r * g.w + q) * c;
            for (int64_t k = 0; k < c; ++k) best[k] = first_max(best[k], xc[k]);
          }
        const T* gyc = gy + ((p * g.oh + i) * g.ow + j) * c;
        std::fill(taken.begin(), taken.end(), char{0});
        for (int64_t r = h0; r < h1; ++r)
          for (int64_t q = w0; q < w1; ++q) {
            const T* xc = xp + (r * g.w + q) * c;
            T* gxc = gxp + (r * g.w + q) * c;
            for (int64_t k = 0; k < c; ++k) {
              const bool hit = !taken[k] && holds(xc[k], best[k]);
              gxc[k] += hit && (!Relu || best[k] > T(0)) ? gyc[k] : T(0);
              taken[k] |= hit;
            }
          }
      }
  }, c);
}

}  // namespace

void max_pool2d(const ir::PoolAttrs& a, Ins in, Outs out) {
  if (a.channels_last) {
    const NhwcGeom n = make_nhwc_geom(in[0].shape(), out[0].shape(), a);
    return dispatch_float(out[0].dtype(), [&](auto t) {
      using T = decltype(t);
      max_forward_nhwc<T>(n, in[0].as<const T>(), out[0].as<T>());
    });
  }
  const PoolGeom g = make_geom(in[0].shape(), out[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    if (is_2x2_tiling(g)) max_forward_2x2<T>(g, in[0].as<const T>(), out[0].as<T>());
    else max_forward<T>(g, in[0].as<const T>(), out[0].as<T>());
  });
}

void max_pool2d_grad(const ir::PoolAttrs& a, Ins in, Outs out) {
  if (a.channels_last) {
    const NhwcGeom n = make_nhwc_geom(in[0].shape(), in[1].shape(), a);
    return dispatch_float(out[0].dtype(), [&](auto t) {
      using T = decltype(t);
      auto* f = a.through_relu ? max_backward_nhwc<true, T> : max_backward_nhwc<false, T>;
      f(n, in[0].as<const T>(), in[1].as<const T>(), out[0].as<T>());
    });
  }
  const PoolGeom g = make_geom(in[0].shape(), in[1].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    const T* x = in[0].as<const T>();
    const T* gy = in[1].as<const T>();
    if (is_2x2_tiling(g)) max_backward_2x2<T>(g, x, gy, out[0].as<T>(), a.through_relu);
    else max_backward<T>(g, x, gy, out[0].as<T>(), a.through_relu);
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
