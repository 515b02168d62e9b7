// Conv2d and its two gradients as im2col/col2im around the shared GEMM, one image per task.
// Per image and group, the column matrix is [C/g * KH * KW, OH * OW]: row (c, kh, kw) holds the
// input pixel each output position reads through that tap (zero in the padding).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/gemm.h"
#include "runtime/kernels/image_scratch.h"
#include "runtime/kernels/library_kernels.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

// Work per task below which images are grouped together (see kMinFlopsPerPart in matmul.cpp).
constexpr double kMinFlopsPerTask = 2e6;

int64_t ceil_div_pos(int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; }

// The output columns [lo, hi) whose tap (.., j) lands inside the input row.
void valid_cols(const ConvGeom& g, int64_t j, int64_t* lo, int64_t* hi) {
  const int64_t shift = j * g.dw - g.pw;
  *lo = std::min(g.ow, ceil_div_pos(-shift, g.sw));
  *hi = std::max(*lo, std::min(g.ow, ceil_div_pos(g.w - shift, g.sw)));
}

// Calls row(col_off, x_off, lo, hi) for every (channel, tap, output row) whose input row exists:
// col[col_off + q] pairs with x[x_off + q * stride_w] for the valid output columns lo <= q < hi.
// Rows outside the input go to skip(col_off). Shared by im2col and col2im.
template <class Row, class Skip>
void for_each_tap_row(const ConvGeom& g, Row&& row, Skip&& skip) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t i = 0; i < g.kh; ++i)
      for (int64_t j = 0; j < g.kw; ++j) {
        const int64_t base = ((c * g.kh + i) * g.kw + j) * g.col_cols();
        int64_t lo, hi;
        valid_cols(g, j, &lo, &hi);
        const int64_t shift = j * g.dw - g.pw;  // x column of output column 0
        for (int64_t y = 0; y < g.oh; ++y) {
          const int64_t ih = y * g.sh - g.ph + i * g.dh;
          if (ih < 0 || ih >= g.h) skip(base + y * g.ow);
          else row(base + y * g.ow, (c * g.h + ih) * g.w + shift, lo, hi);
        }
      }
}

template <class T>
void im2col_by_rows(const ConvGeom& g, const T* x, T* col) {
  for_each_tap_row(
      g,
      [&](int64_t c_off, int64_t x_off, int64_t lo, int64_t hi) {
        T* dst = col + c_off;
        std::fill(dst, dst + lo, T(0));
        if (g.sw == 1 && hi > lo) std::memcpy(dst + lo, x + x_off + lo, (hi - lo) * sizeof(T));
        else for (int64_t q = lo; q < hi; ++q) dst[q] = x[x_off + q * g.sw];
        std::fill(dst + hi, dst + g.ow, T(0));
      },
      [&](int64_t c_off) { std::fill(col + c_off, col + c_off + g.ow, T(0)); });
}

template <class T>
void col2im_by_rows(const ConvGeom& g, const T* col, T* x) {
  std::fill(x, x + g.cg() * g.h * g.w, T(0));
  for_each_tap_row(
      g,
      [&](int64_t c_off, int64_t x_off, int64_t lo, int64_t hi) {
        for (int64_t q = lo; q < hi; ++q) x[x_off + q * g.sw] += col[c_off + q];
      },
      [](int64_t) {});
}

// --- Shifted planes: stride 1 and output width == input width ("same" padding) -------------------
//
// Then output row y + 1 and its input row are both one width further on, so the column-matrix
// row of tap (i, j) is the input plane shifted by a constant, read over one contiguous span, except
// for the padding columns at the row ends. im2col is one copy per tap instead of one per tap and
// output row (3x3 taps over 14-pixel rows were mostly call overhead), and col2im one long,
// vectorizable add per tap.

bool rows_are_shifted_planes(const ConvGeom& g) { return g.sh == 1 && g.sw == 1 && g.ow == g.w; }

/// Where tap (i, j) reads the plane: column entry k (begin <= k < end) is plane pixel k + shift.
/// Output rows [y0, y1) have an input row, and in each the columns [lo, hi) are inside it; the
/// entries of [begin, end) outside those columns are the padding at row ends, and k + shift is
/// then a pixel at the far end of the neighbouring row (never outside the plane).
struct TapSpan {
  int64_t begin = 0, end = 0, shift = 0, y0 = 0, y1 = 0, lo = 0, hi = 0;
};

TapSpan tap_span(const ConvGeom& g, int64_t i, int64_t j) {
  TapSpan s;
  valid_cols(g, j, &s.lo, &s.hi);
  const int64_t first_row = i * g.dh - g.ph;  // the input row of output row 0
  s.y0 = std::clamp<int64_t>(-first_row, 0, g.oh);
  s.y1 = std::clamp<int64_t>(g.h - first_row, s.y0, g.oh);
  if (s.lo == s.hi) s.y1 = s.y0;
  if (s.y0 == s.y1) return s;
  s.begin = s.y0 * g.ow + s.lo;
  s.end = (s.y1 - 1) * g.ow + s.hi;
  s.shift = first_row * g.w + j * g.dw - g.pw;
  return s;
}

/// Zeroes the padding columns of rows [y0, y1) of one column-matrix row. Column by column: a
/// padding column is a pixel or two wide, and a std::fill per row would be a memset call each.
template <class T>
void zero_padding_columns(const ConvGeom& g, const TapSpan& s, T* row) {
  auto zero_column = [&](int64_t q) {
    for (int64_t y = s.y0; y < s.y1; ++y) row[y * g.ow + q] = T(0);
  };
  for (int64_t q = 0; q < s.lo; ++q) zero_column(q);
  for (int64_t q = s.hi; q < g.ow; ++q) zero_column(q);
}

/// Calls f(c, tap, span, column-matrix row offset) for every channel and tap (i * kw + j), in
/// column-matrix order. The spans are computed once per call: they do not depend on the channel.
template <class F>
void for_each_tap_span(const ConvGeom& g, F&& f) {
  std::vector<TapSpan> spans;
  spans.reserve(g.kh * g.kw);
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) spans.push_back(tap_span(g, i, j));
  for (int64_t c = 0, row = 0; c < g.cg(); ++c)
    for (size_t tap = 0; tap < spans.size(); ++tap, ++row)
      f(c, tap, spans[tap], row * g.col_cols());
}

template <class T>
void im2col_shifted(const ConvGeom& g, const T* x, T* col) {
  for_each_tap_span(g, [&](int64_t c, size_t, const TapSpan& s, int64_t off) {
    const T* plane = x + c * g.h * g.w;
    T* row = col + off;
    std::fill(row, row + s.begin, T(0));
    std::copy(plane + s.begin + s.shift, plane + s.end + s.shift, row + s.begin);
    std::fill(row + s.end, row + g.col_cols(), T(0));
    zero_padding_columns(g, s, row);
  });
}

// The padding entries of col are zeroed first and then added like the rest: they land on
// neighbouring pixels of x, and x + (+0) is x bit for bit (sums that start at +0 are never -0).
// A channel's first tap stores 0 + entry, which is what adding it to a zeroed x gives (-0
// included), and zeroes the pixels it does not reach, so x needs no memset. Per pixel, taps add in
// (i, j) order, as in col2im_by_rows, so the results are equal. col is scratch that the next GEMM
// overwrites.
template <class T>
void col2im_shifted(const ConvGeom& g, T* col, T* x) {
  const int64_t plane_size = g.h * g.w;
  for_each_tap_span(g, [&](int64_t c, size_t tap, const TapSpan& s, int64_t off) {
    T* plane = x + c * plane_size;
    T* row = col + off;
    zero_padding_columns(g, s, row);
    if (tap == 0) {
      std::fill(plane, plane + s.begin + s.shift, T(0));
      for (int64_t k = s.begin; k < s.end; ++k) plane[k + s.shift] = T(0) + row[k];
      std::fill(plane + s.end + s.shift, plane + plane_size, T(0));
    } else {
      for (int64_t k = s.begin; k < s.end; ++k) plane[k + s.shift] += row[k];
    }
  });
}

template <class T>
void im2col(const ConvGeom& g, const T* x, T* col) {
  if (rows_are_shifted_planes(g)) im2col_shifted(g, x, col);
  else im2col_by_rows(g, x, col);
}

// Sets each pixel of x (one group's channels) to the sum of the column entries read from it, 0
// where there are none. May overwrite col.
template <class T>
void col2im(const ConvGeom& g, T* col, T* x) {
  if (rows_are_shifted_planes(g)) col2im_shifted(g, col, x);
  else col2im_by_rows(g, col, x);
}

/// Calls f(begin, end, gemm_parallel) on runs of images. When the images are spread over the
/// threads, each GEMM stays on its thread; when they are not (one image, little work), the GEMMs
/// split instead.
template <class F>
void over_images(const ConvGeom& g, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kMinFlopsPerTask / std::max(1.0, g.flops_per_image()));
  const bool split = num_threads() > 1 && g.n > grain;
  parallel_for(g.n, grain, [&](int64_t b, int64_t e) { f(b, e, !split); });
}

template <class T>
GemmArgs gemm_args(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                   int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, double beta,
                   bool parallel) {
  return {.dtype = std::is_same_v<T, double> ? DType::F64 : DType::F32, .trans_a = trans_a,
          .trans_b = trans_b, .m = m, .n = n, .k = k, .a = a, .lda = lda, .b = b, .ldb = ldb,
          .c = c, .ldc = ldc, .alpha = 1, .beta = beta, .parallel = parallel};
}

// y_g[og, OHW] = w_g[og, rows] * col[rows, OHW]. With `blocks`, each image's output goes to
// blocks->done as soon as it is made (in y, or in scratch when y is null), or all of y at the end.
template <class T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, T* y, const OutputBlocks* blocks) {
  const int64_t rows = g.col_rows(), cols = g.col_cols(), in_img = g.c * g.h * g.w;
  const int64_t out_img = g.o * cols;
  const bool per_image = blocks && blocks->block_elems == out_img;
  LT_CHECK(!blocks || per_image || (y && blocks->block_elems == g.n * out_img),
           "conv2d: an epilogue takes images of {} elements or all {}, not blocks of {}{}", out_img,
           g.n * out_img, blocks ? blocks->block_elems : 0, y ? "" : " without an output");
  over_images(g, [&](int64_t b, int64_t e, bool parallel) {
    std::vector<T> col(g.pointwise() ? 0 : rows * cols);
    ImageScratch<T> scratch(y ? 0 : out_img);
    for (int64_t img = b; img < e; ++img) {
      T* yi = y ? y + img * out_img : scratch.at(img * out_img);
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        const T* xg = x + img * in_img + gr * g.cg() * g.h * g.w;
        if (!g.pointwise()) im2col(g, xg, col.data());
        gemm(gemm_args<T>(false, false, g.og(), cols, rows, w + gr * g.og() * rows, rows,
                          g.pointwise() ? xg : col.data(), cols, yi + gr * g.og() * cols, cols, 0,
                          parallel));
      }
      if (per_image) blocks->done(img * out_img, (img + 1) * out_img, yi);
    }
  });
  if (blocks && !per_image) blocks->done(0, g.n * out_img, y);
}

// col[rows, OHW] = w_g^T * gy_g, then scattered back by col2im.
template <class T>
void conv_input_grad(const ConvGeom& g, const T* gy, const T* w, T* gx) {
  const int64_t rows = g.col_rows(), cols = g.col_cols(), in_img = g.c * g.h * g.w;
  over_images(g, [&](int64_t b, int64_t e, bool parallel) {
    std::vector<T> col(g.pointwise() ? 0 : rows * cols);
    for (int64_t img = b; img < e; ++img) {
      for (int64_t gr = 0; gr < g.groups; ++gr) {
        T* gxg = gx + img * in_img + gr * g.cg() * g.h * g.w;
        T* dst = g.pointwise() ? gxg : col.data();
        gemm(gemm_args<T>(true, false, rows, cols, g.og(), w + gr * g.og() * rows, rows,
                          gy + (img * g.o + gr * g.og()) * cols, cols, dst, cols, 0, parallel));
        if (!g.pointwise()) col2im(g, col.data(), gxg);
      }
    }
  });
}

// gw_g[og, rows] += gy_g[og, OHW] * col^T, summed over images: each block of images sums into
// its own buffer, and the blocks are added in block order, so the result does not depend on
// which thread ran which block.
template <class T>
void conv_weight_grad(const ConvGeom& g, const T* x, const T* gy, T* gw) {
  const int64_t rows = g.col_rows(), cols = g.col_cols(), in_img = g.c * g.h * g.w;
  const int64_t wsize = g.o * rows;
  if (g.n == 0) return std::fill(gw, gw + wsize, T(0));
  const int64_t blocks = std::min<int64_t>(g.n, num_threads());
  std::vector<std::vector<T>> partial(blocks - 1, std::vector<T>(wsize));
  const bool parallel = blocks == 1;
  parallel_for(blocks, 1, [&](int64_t b, int64_t e) {
    std::vector<T> col(g.pointwise() ? 0 : rows * cols);
    for (int64_t blk = b; blk < e; ++blk) {
      T* dst = blk == 0 ? gw : partial[blk - 1].data();
      const int64_t i0 = blk * g.n / blocks, i1 = (blk + 1) * g.n / blocks;
      for (int64_t img = i0; img < i1; ++img)
        for (int64_t gr = 0; gr < g.groups; ++gr) {
          const T* xg = x + img * in_img + gr * g.cg() * g.h * g.w;
          if (!g.pointwise()) im2col(g, xg, col.data());
          gemm(gemm_args<T>(false, true, g.og(), rows, cols, gy + (img * g.o + gr * g.og()) * cols,
                            cols, g.pointwise() ? xg : col.data(), cols, dst + gr * g.og() * rows,
                            rows, img == i0 ? 0 : 1, parallel));
        }
    }
  });
  parallel_for(wsize, 16384, [&](int64_t b, int64_t e) {
    for (const std::vector<T>& p : partial)
      for (int64_t i = b; i < e; ++i) gw[i] += p[i];
  });
}

}  // namespace

void conv2d_im2col(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  LT_CHECK(!a.channels_last, "im2col convolutions take NCHW activations");
  const ConvGeom g = make_geom(in[0].shape(), in[1].shape(), out[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    conv_forward<T>(g, in[0].as<const T>(), in[1].as<const T>(), out[0].as<T>(), blocks);
  });
}

void conv2d_input_grad_im2col(const ir::ConvAttrs& a, Ins in, Outs out) {
  LT_CHECK(!a.channels_last, "im2col convolutions take NCHW activations");
  const ConvGeom g = make_geom(out[0].shape(), in[1].shape(), in[0].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    conv_input_grad<T>(g, in[0].as<const T>(), in[1].as<const T>(), out[0].as<T>());
  });
}

void conv2d_weight_grad_im2col(const ir::ConvAttrs& a, Ins in, Outs out) {
  LT_CHECK(!a.channels_last, "im2col convolutions take NCHW activations");
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  dispatch_float(out[0].dtype(), [&](auto t) {
    using T = decltype(t);
    conv_weight_grad<T>(g, in[0].as<const T>(), in[1].as<const T>(), out[0].as<T>());
  });
}

}  // namespace lt::rt
