// The weight gradient of a channels-last convolution as one GEMM: with activations [N, H, W, C]
// each output pixel reads, per kernel tap, a row of C input values, so gw [O, KH * KW * C] =
// gy^T x col, gy the [P, O] matrix of the output's P = N * OH * OW pixels and col the [P,
// KH * KW * C] rows they read (zeros where a tap falls in the padding); for a 1x1 kernel at
// stride 1 without padding col is the input itself. gw is then reordered to the weight's
// [O, C, KH, KW]. One call of rt::gemm, split over the pool as it splits any GEMM, where
// oneDNN's direct kernels for these shapes run well below the GEMM rate.
#include <cstring>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/gemm.h"

namespace lt::rt {

bool weight_grad_gemm_supported(const ConvGeom& g, DType dtype, DType out_dtype) {
  const bool types = (dtype == DType::F32 && out_dtype == DType::F32) ||
                     (dtype == DType::BF16 &&
                      (out_dtype == DType::BF16 || out_dtype == DType::F32));
  // Compared on AVX-512 CPUs, where the f32 GEMM is oneDNN's too; elsewhere oneDNN keeps these
  // convolutions. f32: oneDNN's direct kernel is the faster with many output pixels, and with few
  // (ResNet-50's last stage) runs well below the GEMM rate on 1x1 kernels, the more so the more
  // channels. bf16: oneDNN's kernel is the slower at every size where the GEMM runs on AMX tiles.
  constexpr int64_t kMaxPixels = 1023;
  static const bool avx512 = std::string_view(gemm_backend()) == "onednn";
  static const bool amx = std::string_view(gemm_bf16_backend()) == "onednn-amx";
  if (!types || !avx512 || !g.channels_last || g.groups != 1) return false;
  if (dtype == DType::BF16 && amx) return true;
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.ph == 0 && g.pw == 0;
  return pointwise && g.n * g.oh * g.ow <= kMaxPixels;
}

void conv2d_weight_grad_gemm(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  const DType t = in[0].dtype(), out_t = out[0].dtype();
  LT_CHECK(weight_grad_gemm_supported(g, t, out_t),
           "conv2d_weight_grad: not a channels-last convolution without groups the GEMM takes");
  const int64_t pixels = g.n * g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t esize = static_cast<int64_t>(dtype_size(t)), row = g.c * esize;
  const char* x = static_cast<const char*>(in[0].data);
  std::vector<char> col;  // the rows the output pixels read, tap after tap
  if (!g.pointwise()) {
    col.resize(static_cast<size_t>(pixels * taps * row));
    char* dst = col.data();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j)
          for (int64_t ki = 0; ki < g.kh; ++ki)
            for (int64_t kj = 0; kj < g.kw; ++kj, dst += row) {
              const int64_t y = i * g.sh - g.ph + ki * g.dh, xx = j * g.sw - g.pw + kj * g.dw;
              if (y < 0 || y >= g.h || xx < 0 || xx >= g.w) std::memset(dst, 0, row);
              else std::memcpy(dst, x + ((n * g.h + y) * g.w + xx) * row, row);
            }
    x = col.data();
  }
  // [O, KH, KW, C] straight into the result for a 1x1 kernel; reordered otherwise.
  const int64_t out_esize = static_cast<int64_t>(dtype_size(out_t)), k = taps * g.c;
  std::vector<char> scratch(taps > 1 ? static_cast<size_t>(g.o * k * out_esize) : 0);
  char* gw = taps > 1 ? scratch.data() : static_cast<char*>(out[0].data);
  gemm({.dtype = t, .trans_a = true, .m = g.o, .n = k, .k = pixels, .a = in[1].data, .lda = g.o,
        .b = x, .ldb = k, .c = gw, .ldc = k, .c_dtype = out_t});
  if (taps == 1) return;
  char* w = static_cast<char*>(out[0].data);
  for (int64_t o = 0; o < g.o; ++o)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t c = 0; c < g.c; ++c)
        std::memcpy(w + ((o * g.c + c) * taps + tap) * out_esize,
                    gw + (o * k + tap * g.c + c) * out_esize, static_cast<size_t>(out_esize));
}

}  // namespace lt::rt
