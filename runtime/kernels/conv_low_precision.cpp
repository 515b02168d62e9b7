// Convolutions on bf16 or f16 operands (autocast) through the f32 paths: the operands widened to
// f32 (exactly), the f32 convolution (which accumulates in f32, as a bf16 kernel does), and its
// result rounded to nearest even (or, f32_out, kept as it is). The path of f16, and of bf16 on
// CPUs without bf16 instructions (oneDNN's bf16 kernels take the rest, conv.cpp); epilogue blocks
// still stream, one image at a time.
#include <vector>

#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/image_scratch.h"
#include "runtime/kernels/storage_types.h"

namespace lt::rt {
namespace {

template <class T>
void widen(const T* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
}

template <class T>
void narrow(const float* src, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}

template <class T>
void via_f32(Ins in, Outs out, const OutputBlocks* blocks, const F32Conv& f32_conv) {
  std::vector<TensorType> types;
  types.reserve(in.size() + 1);
  std::vector<std::vector<float>> wide;
  wide.reserve(in.size());  // in32 points into these
  std::vector<TensorRef> in32;
  for (const TensorRef& x : in) {
    types.push_back({DType::F32, x.shape()});
    wide.emplace_back(x.numel());
    widen(x.as<const T>(), wide.back().data(), x.numel());
    in32.push_back({wide.back().data(), &types.back()});
  }
  if (out[0].dtype() == DType::F32) return f32_conv(in32, out, blocks);  // f32_out: unrounded
  types.push_back({DType::F32, out[0].shape()});
  const TensorType& y_type = types.back();
  T* y = out[0].as<T>();
  const int64_t n = out[0].numel();
  // No blocks, or one block of the whole output (which the output then holds): the f32 result
  // whole, rounded into the output, and the epilogue run on all of it.
  if (!blocks || blocks->block_elems == n) {
    std::vector<float> y32(n);
    const TensorRef out32[] = {{y32.data(), &y_type}};
    f32_conv(in32, out32, nullptr);
    narrow(y32.data(), y, n);
    if (blocks) blocks->done(0, n, y);
    return;
  }
  // Each f32 block, rounded into the output (or into scratch of the block's own when the output
  // is not written whole), goes on to the epilogue.
  const OutputBlocks narrowed{
      .block_elems = blocks->block_elems,
      .done = [&](int64_t begin, int64_t end, const void* data) {
        const float* src = static_cast<const float*>(data);
        if (y) {
          narrow(src, y + begin, end - begin);
          return blocks->done(begin, end, y + begin);
        }
        ImageScratch<T> scratch(end - begin);
        narrow(src, scratch.at(begin), end - begin);
        blocks->done(begin, end, scratch.at(begin));
      }};
  const TensorRef out32[] = {{nullptr, &y_type}};
  f32_conv(in32, out32, &narrowed);
}

}  // namespace

void conv_low_via_f32(Ins in, Outs out, const OutputBlocks* blocks, const F32Conv& f32_conv) {
  if (in[0].dtype() == DType::F16) via_f32<Eigen::half>(in, out, blocks, f32_conv);
  else via_f32<Eigen::bfloat16>(in, out, blocks, f32_conv);
}

}  // namespace lt::rt
