// The weight gradient of a channels-last 1x1 convolution as one GEMM: with activations
// [N, H, W, C] each output pixel's input is a row of C values, so gw [O, C] = gy^T x xs, gy the
// [P, O] matrix of the output's P = N * OH * OW pixels and xs the [P, C] rows they read (the
// input itself at stride 1, every stride-th pixel gathered otherwise). One call of rt::gemm,
// split over the pool as it splits any GEMM, where oneDNN's direct kernel for these shapes (few
// pixels and many channels: ResNet-50's last stage) runs far below the GEMM rate.
#include <cstring>
#include <string_view>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/gemm.h"

namespace lt::rt {

bool pointwise_weight_grad_supported(const ConvGeom& g, DType dtype, DType out_dtype) {
  const bool types = (dtype == DType::F32 && out_dtype == DType::F32) ||
                     (dtype == DType::BF16 &&
                      (out_dtype == DType::BF16 || out_dtype == DType::F32));
  // With many output pixels oneDNN's direct f32 kernel is the faster; with few (ResNet-50's last
  // stage) it runs well below the GEMM rate, the more so the more channels. Its bf16 kernel is
  // the slower at every size where the GEMM runs on AMX tiles.
  constexpr int64_t kMaxPixels = 1023;
  // Both compared on AVX-512 CPUs, where the f32 GEMM is oneDNN's too; elsewhere oneDNN keeps
  // these convolutions.
  static const bool avx512 = std::string_view(gemm_backend()) == "onednn";
  static const bool amx = std::string_view(gemm_bf16_backend()) == "onednn-amx";
  const bool few_pixels = g.n * g.oh * g.ow <= kMaxPixels;
  return types && avx512 && g.channels_last && g.groups == 1 && g.kh == 1 && g.kw == 1 &&
         g.ph == 0 && g.pw == 0 && (few_pixels || (dtype == DType::BF16 && amx));
}

void conv2d_weight_grad_pointwise(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  const DType t = in[0].dtype();
  LT_CHECK(pointwise_weight_grad_supported(g, t, out[0].dtype()),
           "conv2d_weight_grad: not a channels-last 1x1 convolution without padding or groups");
  const int64_t pixels = g.n * g.oh * g.ow, esize = static_cast<int64_t>(dtype_size(t));
  const char* x = static_cast<const char*>(in[0].data);
  std::vector<char> rows;  // the pixels a strided convolution reads, one row of C each
  if (g.sh != 1 || g.sw != 1) {
    rows.resize(static_cast<size_t>(pixels * g.c * esize));
    const int64_t row = g.c * esize;
    char* dst = rows.data();
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j, dst += row)
          std::memcpy(dst, x + ((n * g.h + i * g.sh) * g.w + j * g.sw) * row, row);
    x = rows.data();
  }
  gemm({.dtype = t, .trans_a = true, .m = g.o, .n = g.c, .k = pixels, .a = in[1].data,
        .lda = g.o, .b = x, .ldb = g.c, .c = out[0].data, .ldc = g.c,
        .c_dtype = out[0].dtype()});
}

}  // namespace lt::rt
