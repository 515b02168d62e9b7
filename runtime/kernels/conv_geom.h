// A convolution's sizes and passes, shared by its paths (conv_paths.h). Kernel-internal.
#pragma once
#include <compare>
#include <cstdint>

#include "ir/attrs.h"
#include "ir/shape.h"

namespace lt::rt {

/// The three computations of a convolution: y from (x, w), gx from (gy, w), gw from (x, gy).
enum class ConvPass { Forward, InputGrad, WeightGrad };

struct ConvGeom {
  int64_t n, c, h, w;  // input
  int64_t o, kh, kw;   // weight
  int64_t oh, ow;      // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
  bool channels_last;  // activations [N, H, W, C] rather than [N, C, H, W]

  int64_t cg() const { return c / groups; }
  int64_t og() const { return o / groups; }
  int64_t col_rows() const { return cg() * kh * kw; }
  int64_t col_cols() const { return oh * ow; }
  // A 1x1 kernel with stride 1 and no padding reads the input as its own column matrix.
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
  double flops_per_image() const { return 2.0 * o * col_rows() * col_cols(); }
  int64_t in_image() const { return c * h * w; }
  int64_t out_image() const { return o * oh * ow; }
  int64_t weight_size() const { return o * col_rows(); }
  auto operator<=>(const ConvGeom&) const = default;
};

/// x [N, C, H, W], w [O, C/groups, KH, KW], y [N, O, OH, OW]; x [N, H, W, C] and y [N, OH, OW, O]
/// when a.channels_last.
inline ConvGeom make_geom(const Shape& x, const Shape& w, const Shape& y, const ir::ConvAttrs& a) {
  const bool cl = a.channels_last;
  return {x[0],         cl ? x[3] : x[1],  cl ? x[1] : x[2],  cl ? x[2] : x[3],
          w[0],         w[2],              w[3],              cl ? y[1] : y[2],
          cl ? y[2] : y[3], a.stride[0],   a.stride[1],       a.padding[0],
          a.padding[1], a.dilation[0],     a.dilation[1],     a.groups,
          cl};
}

}  // namespace lt::rt
