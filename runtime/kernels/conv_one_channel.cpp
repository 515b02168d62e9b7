// Direct convolutions of one input channel on channels-last outputs (a network's first layer on
// gray images): the forward and the weight gradient. With one input channel each output pixel is
// KH*KW multiply-adds of one input value, broadcast, into every output channel, so the loops run
// over output channels in vectors of 16, and a 3x3 kernel's weights (or the weight gradient's
// sums) of 32 channels stay in registers for a whole image. im2col's GEMM of K = KH*KW is too
// short to run well, and oneDNN reorders the output gradient to its blocked layout first
// (docs/BENCHMARKS.md, "One input channel").
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/double_lanes.h"
#include "runtime/kernels/image_scratch.h"
#include "runtime/kernels/storage_types.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

constexpr int kLanes = 16;  // output channels per vector
using ChanVec = float __attribute__((vector_size(kLanes * sizeof(float))));
using ChanBits = uint32_t __attribute__((vector_size(kLanes * sizeof(uint32_t))));
using ChanHalf = uint16_t __attribute__((vector_size(kLanes * sizeof(uint16_t))));

// Vectors go by reference: by value would change the calling convention without AVX-512.
inline void load(const float* p, ChanVec& v) { std::memcpy(&v, p, sizeof v); }
inline void load(const Eigen::bfloat16* p, ChanVec& v) {  // bf16 is f32's upper half
  ChanHalf h;
  std::memcpy(&h, static_cast<const void*>(p), sizeof h);
  const ChanBits w = __builtin_convertvector(h, ChanBits) << 16;
  std::memcpy(&v, &w, sizeof v);
}
inline void store(const ChanVec& v, float* p) { std::memcpy(p, &v, sizeof v); }
// Rounded as a cast to bf16 rounds (bf16_bits).
inline void store(const ChanVec& v, Eigen::bfloat16* p) {
  ChanBits b;
  std::memcpy(&b, &v, sizeof b);
  const ChanBits nan = reinterpret_cast<ChanBits>(v != v);
  const ChanHalf h = __builtin_convertvector(bf16_bits(b, nan), ChanHalf);
  std::memcpy(static_cast<void*>(p), &h, sizeof h);
}

/// The padded input image's row length, and its size.
int64_t padded_width(const ConvGeom& g) { return g.w + 2 * g.pw; }
int64_t padded_image(const ConvGeom& g) { return (g.h + 2 * g.ph) * padded_width(g); }

/// One image of x widened to f32 inside zeros of the padding's width, so that every tap of every
/// output pixel reads it without a bounds check ((OH-1)*SH + (KH-1)*DH < H + 2*PH by the output
/// size's rule, and the same across).
template <class T>
void pad_image(const ConvGeom& g, const T* x, float* xp) {
  const int64_t wp = padded_width(g);
  std::fill(xp, xp + padded_image(g), 0.0f);
  for (int64_t r = 0; r < g.h; ++r)
    for (int64_t c = 0; c < g.w; ++c)
      xp[(r + g.ph) * wp + g.pw + c] = convert_value<float>(x[r * g.w + c]);
}

/// Where the taps of the output pixel at (0, 0) read the padded image, tap t = i * KW + j.
std::vector<int64_t> tap_offsets(const ConvGeom& g) {
  std::vector<int64_t> off(g.kh * g.kw);
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) off[i * g.kw + j] = i * g.dh * padded_width(g) + j * g.dw;
  return off;
}

/// Output channels [ob, ob + NV * 16) of one image: y[p, o] = sum over taps t of x at p's tap t
/// times wt[t, o] (the weights tap-major, f32). Taps: KH * KW when known at compile time (the
/// weights then sit in registers), 0 for a count read at run time. Pixels go P at a time along a
/// row: each accumulator is a chain of dependent multiply-adds, and P * NV chains keep the FMA
/// units busy where NV alone would wait on their latency.
template <int NV, int Taps, class Y>
void forward_block(const ConvGeom& g, const float* xp, const int64_t* off, const float* wt,
                   int64_t ob, Y* y) {
  constexpr int P = NV == 1 ? 4 : 2;
  const int64_t wp = padded_width(g);
  const int64_t taps = Taps > 0 ? Taps : g.kh * g.kw;
  auto pixels = [&](auto&& weight) {
    // Q pixels from (oh, ow), their taps s apart in the padded row.
    auto run = [&]<int Q>(int64_t oh, int64_t ow) {
      const float* px = xp + oh * g.sh * wp + ow * g.sw;
      ChanVec acc[Q][NV] = {};
      for (int64_t t = 0; t < taps; ++t)
        for (int q = 0; q < Q; ++q) {
          const float xv = px[off[t] + q * g.sw];
          for (int v = 0; v < NV; ++v) acc[q][v] += xv * weight(t, v);
        }
      Y* out = y + (oh * g.ow + ow) * g.o + ob;
      for (int q = 0; q < Q; ++q)
        for (int v = 0; v < NV; ++v) store(acc[q][v], out + q * g.o + v * kLanes);
    };
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      int64_t ow = 0;
      for (; ow + P <= g.ow; ow += P) run.template operator()<P>(oh, ow);
      for (; ow < g.ow; ++ow) run.template operator()<1>(oh, ow);
    }
  };
  if constexpr (Taps > 0) {
    ChanVec w[Taps][NV];
    for (int t = 0; t < Taps; ++t)
      for (int v = 0; v < NV; ++v) load(wt + t * g.o + ob + v * kLanes, w[t][v]);
    pixels([&](int64_t t, int v) -> const ChanVec& { return w[t][v]; });
  } else {
    pixels([&](int64_t t, int v) {
      ChanVec w;
      load(wt + t * g.o + ob + v * kLanes, w);
      return w;
    });
  }
}

/// sums[t, o] += the weight gradient's terms of `images` images (gy channels-last, T) for output
/// channels [ob, ob + NV * 16): gy at pixel p times x at p's tap t. Taps as forward_block's.
template <int NV, int Taps, class T>
void weight_grad_block(const ConvGeom& g, const float* xp, int64_t images, const int64_t* off,
                       const T* gy, int64_t ob, float* sums) {
  const int64_t wp = padded_width(g), taps = Taps > 0 ? Taps : g.kh * g.kw;
  constexpr int kRegTaps = Taps > 0 ? Taps : 1;
  ChanVec acc[kRegTaps][NV] = {};
  std::vector<ChanVec> mem(Taps > 0 ? 0 : taps * NV, ChanVec{});
  for (int64_t img = 0; img < images; ++img) {
    const float* x_img = xp + img * padded_image(g);
    const T* gy_img = gy + img * g.out_image();
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        const float* px = x_img + oh * g.sh * wp + ow * g.sw;
        ChanVec gv[NV];
        for (int v = 0; v < NV; ++v) load(gy_img + (oh * g.ow + ow) * g.o + ob + v * kLanes, gv[v]);
        for (int64_t t = 0; t < taps; ++t) {
          const float xv = px[off[t]];
          for (int v = 0; v < NV; ++v) {
            if constexpr (Taps > 0) acc[t][v] += xv * gv[v];
            else mem[t * NV + v] += xv * gv[v];
          }
        }
      }
  }
  for (int64_t t = 0; t < taps; ++t)
    for (int v = 0; v < NV; ++v) {
      ChanVec s;
      load(sums + t * g.o + ob + v * kLanes, s);
      s += Taps > 0 ? acc[t][v] : mem[t * NV + v];
      store(s, sums + t * g.o + ob + v * kLanes);
    }
}

/// Calls f(NV, Taps) as template arguments for output channel block ob: two vectors where the
/// channels left allow, the 3x3 kernel's tap count fixed.
template <class F>
void for_blocks(const ConvGeom& g, F&& f) {
  const bool k3 = g.kh == 3 && g.kw == 3;
  for (int64_t ob = 0; ob < g.o;) {
    const bool two = g.o - ob >= 2 * kLanes;
    if (two && k3) f.template operator()<2, 9>(ob);
    else if (two) f.template operator()<2, 0>(ob);
    else if (k3) f.template operator()<1, 9>(ob);
    else f.template operator()<1, 0>(ob);
    ob += (two ? 2 : 1) * kLanes;
  }
}

// T: x's and w's element type; Y: y's (T, or f32 for bf16 operands with f32_out).
template <class T, class Y>
void forward(const ConvGeom& g, Ins in, Outs out, const OutputBlocks* blocks) {
  const T* x = in[0].as<const T>();
  const T* w = in[1].as<const T>();
  Y* y = out[0].as<Y>();
  const int64_t out_img = g.out_image(), taps = g.kh * g.kw;
  const bool per_image = blocks && blocks->block_elems == out_img;
  LT_CHECK(!blocks || per_image || (y && blocks->block_elems == g.n * out_img),
           "conv2d: an epilogue takes images of {} elements or all {}, not blocks of {}{}", out_img,
           g.n * out_img, blocks ? blocks->block_elems : 0, y ? "" : " without an output");
  std::vector<float> wt(taps * g.o);  // [taps, O]
  for (int64_t o = 0; o < g.o; ++o)
    for (int64_t t = 0; t < taps; ++t) wt[t * g.o + o] = convert_value<float>(w[o * taps + t]);
  const std::vector<int64_t> off = tap_offsets(g);
  parallel_for(g.n, 1, [&](int64_t b, int64_t e) {
    std::vector<float> xp(padded_image(g));
    ImageScratch<Y> scratch(y ? 0 : out_img);
    for (int64_t img = b; img < e; ++img) {
      pad_image(g, x + img * g.in_image(), xp.data());
      Y* yi = y ? y + img * out_img : scratch.at(img * out_img);
      for_blocks(g, [&]<int NV, int Taps>(int64_t ob) {
        forward_block<NV, Taps>(g, xp.data(), off.data(), wt.data(), ob, yi);
      });
      if (per_image) blocks->done(img * out_img, (img + 1) * out_img, yi);
    }
  });
  if (blocks && !per_image) blocks->done(0, g.n * out_img, y);
}

// Images per chunk of the weight gradient: each chunk sums into its own buffer and the buffers
// are added in chunk order, so the result does not depend on the thread count.
constexpr int64_t kChunkImages = 4;

template <class T, class Y>
void weight_grad(const ConvGeom& g, Ins in, Outs out) {
  const T* x = in[0].as<const T>();
  const T* gy = in[1].as<const T>();
  Y* gw = out[0].as<Y>();
  const int64_t taps = g.kh * g.kw, wsize = taps * g.o;
  const int64_t chunks = (g.n + kChunkImages - 1) / kChunkImages;
  std::vector<float> partial(chunks * wsize, 0.0f);  // per chunk, [taps, O]
  const std::vector<int64_t> off = tap_offsets(g);
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    std::vector<float> xp(kChunkImages * padded_image(g));
    for (int64_t k = b; k < e; ++k) {
      const int64_t i0 = k * kChunkImages, images = std::min(g.n, i0 + kChunkImages) - i0;
      for (int64_t i = 0; i < images; ++i)
        pad_image(g, x + (i0 + i) * g.in_image(), xp.data() + i * padded_image(g));
      for_blocks(g, [&]<int NV, int Taps>(int64_t ob) {
        weight_grad_block<NV, Taps>(g, xp.data(), images, off.data(), gy + i0 * g.out_image(), ob,
                                    partial.data() + k * wsize);
      });
    }
  });
  for (int64_t o = 0; o < g.o; ++o)
    for (int64_t t = 0; t < taps; ++t) {
      float s = 0;
      for (int64_t k = 0; k < chunks; ++k) s += partial[k * wsize + t * g.o + o];
      gw[o * taps + t] = static_cast<Y>(s);
    }
}

/// Calls f(T{}, Y{}) for the operands' and the result's element types.
template <class F>
void dispatch(DType t, DType y, F&& f) {
  if (t == DType::F32) return f(float{}, float{});
  if (y == DType::F32) return f(Eigen::bfloat16{}, float{});
  return f(Eigen::bfloat16{}, Eigen::bfloat16{});
}

}  // namespace

bool one_channel_conv_supported(ConvPass pass, const ConvGeom& g, DType dtype, DType out_dtype) {
  const bool types = dtype == DType::F32 || (dtype == DType::BF16 && (out_dtype == DType::BF16 ||
                                                                       out_dtype == DType::F32));
  return pass != ConvPass::InputGrad && g.channels_last && g.groups == 1 && g.c == 1 &&
         g.o % kLanes == 0 && types && (dtype != DType::F32 || out_dtype == DType::F32);
}

void conv2d_one_channel(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  const ConvGeom g = make_geom(in[0].shape(), in[1].shape(), out[0].shape(), a);
  LT_CHECK(one_channel_conv_supported(ConvPass::Forward, g, in[0].dtype(), out[0].dtype()),
           "conv2d: not a channels-last convolution of one input channel into a multiple of {} "
           "output channels", kLanes);
  dispatch(in[0].dtype(), out[0].dtype(), [&](auto t, auto y) {
    forward<decltype(t), decltype(y)>(g, in, out, blocks);
  });
}

void conv2d_weight_grad_one_channel(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  LT_CHECK(one_channel_conv_supported(ConvPass::WeightGrad, g, in[0].dtype(), out[0].dtype()),
           "conv2d_weight_grad: not a channels-last convolution of one input channel into a "
           "multiple of {} output channels", kLanes);
  dispatch(in[0].dtype(), out[0].dtype(), [&](auto t, auto y) {
    weight_grad<decltype(t), decltype(y)>(g, in, out);
  });
}

}  // namespace lt::rt
