// conv2d and its gradients through oneDNN's direct convolutions (onednn_conv.h), f32 or bf16: the
// batch is cut into chunks of images, and each of the pool's threads runs a one-thread primitive
// per chunk. Weights are put into the primitive's layout once per call, before the chunks run.
#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/image_scratch.h"
#include "runtime/kernels/onednn_conv.h"
#include "runtime/kernels/onednn_matmul.h"
#include "runtime/thread_pool.h"

namespace lt::rt {
namespace {

using onednn::ConvPrimitives;

// Images per chunk of a forward or input gradient: small enough that a chunk's output is in
// cache when the forward's epilogue reads it, and that the pool's threads share the chunks
// evenly; large enough that a primitive call's fixed cost stays small.
constexpr int64_t kImagesPerChunk = 4;

/// How a pass cuts the batch: chunk k holds images [begin(k), begin(k + 1)). The forward and
/// input gradient use chunks of kImagesPerChunk (the last one shorter); the weight gradient one
/// chunk per thread (each sums into a buffer of its own), of n / chunks images rounded either way.
struct Chunks {
  int64_t n, count;
  bool even_split;

  int64_t begin(int64_t k) const {
    return even_split ? k * n / count : std::min(n, k * kImagesPerChunk);
  }
  int64_t size(int64_t k) const { return begin(k + 1) - begin(k); }
};

Chunks chunks_of(ConvPass pass, const ConvGeom& g) {
  if (pass == ConvPass::WeightGrad)
    return {g.n, std::min<int64_t>(g.n, num_threads()), true};
  return {g.n, (g.n + kImagesPerChunk - 1) / kImagesPerChunk, false};
}

ConvGeom with_images(ConvGeom g, int64_t n) {
  g.n = n;
  return g;
}

/// The primitives of every chunk size of the pass (at most two), by chunk; empty when oneDNN
/// has no JIT kernel for one of them.
class ChunkPrimitives {
 public:
  ChunkPrimitives(ConvPass pass, const ConvGeom& g, DType dtype, DType out_dtype)
      : chunks_(chunks_of(pass, g)) {
    if (chunks_.count == 0) return;
    // A weight gradient's primitive writes f32 whatever its result's dtype.
    if (pass == ConvPass::WeightGrad) out_dtype = dtype;
    first_ = onednn::conv_primitives(pass, with_images(g, chunks_.size(0)), dtype, out_dtype);
    const int64_t last_size = chunks_.size(chunks_.count - 1);
    last_ = last_size == chunks_.size(0)
                ? first_
                : onednn::conv_primitives(pass, with_images(g, last_size), dtype, out_dtype);
  }
  bool ok() const { return first_ && last_; }
  const Chunks& chunks() const { return chunks_; }
  const ConvPrimitives& at(int64_t k) const {
    return chunks_.size(k) == chunks_.size(0) ? *first_ : *last_;
  }
  const ConvPrimitives& first() const { return *first_; }
  const ConvPrimitives& last() const { return *last_; }

 private:
  Chunks chunks_;
  std::shared_ptr<const ConvPrimitives> first_, last_;
};

struct AlignedDelete {
  void operator()(char* p) const { ::operator delete[](p, std::align_val_t(64)); }
};
using AlignedBytes = std::unique_ptr<char[], AlignedDelete>;

AlignedBytes aligned_bytes(size_t n) {
  return AlignedBytes(n ? static_cast<char*>(::operator new[](n, std::align_val_t(64))) : nullptr);
}

/// The weights in the layout of every chunk's primitive (packed once per layout).
class PackedWeights {
 public:
  PackedWeights(const ChunkPrimitives& prims, const void* w)
      : first_buf_(aligned_bytes(onednn::packed_weights_bytes(prims.first()))),
        first_(onednn::pack_weights(prims.first(), w, first_buf_.get())),
        last_(first_) {
    if (onednn::same_weight_layout(prims.first(), prims.last())) return;
    last_buf_ = aligned_bytes(onednn::packed_weights_bytes(prims.last()));
    last_ = onednn::pack_weights(prims.last(), w, last_buf_.get());
  }
  const void* for_chunk(const ChunkPrimitives& prims, int64_t k) const {
    return &prims.at(k) == &prims.first() ? first_ : last_;
  }

 private:
  AlignedBytes first_buf_, last_buf_;
  const void* first_;
  const void* last_;
};

ChunkPrimitives checked(ConvPass pass, const ConvGeom& g, Ins in, Outs out, const char* what) {
  ChunkPrimitives prims(pass, g, in[0].dtype(), out[0].dtype());
  LT_CHECK(prims.ok() || g.n == 0, "{}: oneDNN has no {} kernel for this geometry", what,
           dtype_name(in[0].dtype()));
  return prims;
}

// T: the operands' element type; Y: the result's (T, or float for bf16 operands with f32_out).
template <class T, class Y>
void forward(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  const ConvGeom g = make_geom(in[0].shape(), in[1].shape(), out[0].shape(), a);
  const auto* x = in[0].as<const T>();
  auto* y = out[0].as<Y>();
  const int64_t in_img = g.in_image(), out_img = g.out_image();
  const bool per_image = blocks && blocks->block_elems == out_img;
  LT_CHECK(!blocks || per_image || (y && blocks->block_elems == g.n * out_img),
           "conv2d: an epilogue takes images of {} elements or all {}, not blocks of {}{}", out_img,
           g.n * out_img, blocks ? blocks->block_elems : 0, y ? "" : " without an output");
  const ChunkPrimitives prims = checked(ConvPass::Forward, g, in, out, "conv2d");
  const Chunks& chunks = prims.chunks();
  if (chunks.count > 0) {
    const PackedWeights w(prims, in[1].data);
    parallel_for(chunks.count, 1, [&](int64_t b, int64_t e) {
      ImageScratch<Y> scratch(y ? 0 : chunks.size(0) * out_img);  // a chunk's, reused
      for (int64_t k = b; k < e; ++k) {
        const int64_t first = chunks.begin(k);
        if (onednn::writes_our_layout(prims.at(k))) {
          Y* dst = y ? y + first * out_img : scratch.at(first * out_img);
          onednn::conv_forward_direct(prims.at(k), x + first * in_img, w.for_chunk(prims, k), dst);
          if (per_image)
            for (int64_t i = 0; i < chunks.size(k); ++i)
              blocks->done((first + i) * out_img, (first + i + 1) * out_img, dst + i * out_img);
          continue;
        }
        auto image_out = [&](int64_t i) -> void* {
          return y ? y + (first + i) * out_img : scratch.at((first + i) * out_img);
        };
        std::function<void(int64_t, void*)> image_done;
        if (per_image)
          image_done = [&](int64_t i, void* data) {
            blocks->done((first + i) * out_img, (first + i + 1) * out_img, data);
          };
        onednn::conv_forward(prims.at(k), x + first * in_img, w.for_chunk(prims, k), image_out,
                             image_done);
      }
    });
  }
  if (blocks && !per_image) blocks->done(0, g.n * out_img, y);
}

template <class T, class Y>
void input_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(out[0].shape(), in[1].shape(), in[0].shape(), a);
  const auto* gy = in[0].as<const T>();
  auto* gx = out[0].as<Y>();
  const ChunkPrimitives prims = checked(ConvPass::InputGrad, g, in, out, "conv2d_input_grad");
  const Chunks& chunks = prims.chunks();
  if (chunks.count == 0) return;
  const PackedWeights w(prims, in[1].data);
  parallel_for(chunks.count, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t first = chunks.begin(k);
      onednn::conv_input_grad(prims.at(k), gy + first * g.out_image(), w.for_chunk(prims, k),
                              gx + first * g.in_image());
    }
  });
}

// Each chunk sums its images into an f32 buffer of its own, and the buffers are added in chunk
// order, so the result does not depend on which thread ran which chunk; a bf16 gradient is rounded
// once, from that f32 sum (an f32 one, f32_out, is that sum).
template <class T, class Y>
void weight_grad(const ir::ConvAttrs& a, Ins in, Outs out) {
  const ConvGeom g = make_geom(in[0].shape(), out[0].shape(), in[1].shape(), a);
  const auto* x = in[0].as<const T>();
  const auto* gy = in[1].as<const T>();
  Y* gw = out[0].as<Y>();
  const int64_t wsize = g.weight_size();
  if (g.n == 0) return std::fill(gw, gw + wsize, Y(0.0f));
  const ChunkPrimitives prims = checked(ConvPass::WeightGrad, g, in, out, "conv2d_weight_grad");
  const Chunks& chunks = prims.chunks();
  constexpr bool kF32 = std::is_same_v<Y, float>;
  std::vector<float> first_sum(kF32 ? 0 : wsize);  // chunk 0's sum, when gw is not f32
  float* sum = first_sum.data();
  if constexpr (kF32) sum = gw;
  std::vector<std::vector<float>> partial(chunks.count - 1, std::vector<float>(wsize));
  parallel_for(chunks.count, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t first = chunks.begin(k);
      onednn::conv_weight_grad(prims.at(k), x + first * g.in_image(), gy + first * g.out_image(),
                               k == 0 ? sum : partial[k - 1].data());
    }
  });
  parallel_for(wsize, 16384, [&](int64_t b, int64_t e) {
    for (const std::vector<float>& p : partial)
      for (int64_t i = b; i < e; ++i) sum[i] += p[i];
    if constexpr (!kF32)
      for (int64_t i = b; i < e; ++i) gw[i] = static_cast<Y>(sum[i]);
  });
}

bool is_bf16(const TensorRef& t) { return t.dtype() == DType::BF16; }

using Bf16 = Eigen::bfloat16;

}  // namespace

bool onednn_conv_supported(ConvPass pass, const ConvGeom& g, DType dtype, DType out_dtype) {
  if (g.n == 0 || g.c == 0 || g.o == 0 || g.oh <= 0 || g.ow <= 0) return false;
  if (dtype != DType::F32 && dtype != DType::BF16) return false;
  if (out_dtype != dtype && out_dtype != DType::F32) return false;
  // Without bf16 instructions oneDNN's AVX-512 kernels emulate bf16, slower than the f32 path.
  if (dtype == DType::BF16 && !onednn::bf16_isa()) return false;
  return ChunkPrimitives(pass, g, dtype, out_dtype).ok();
}

// Operands f32 -> result f32; bf16 -> bf16, or f32 with f32_out.
void conv2d_onednn(const ir::ConvAttrs& a, Ins in, Outs out, const OutputBlocks* blocks) {
  if (!is_bf16(in[0])) return forward<float, float>(a, in, out, blocks);
  if (is_bf16(out[0])) return forward<Bf16, Bf16>(a, in, out, blocks);
  forward<Bf16, float>(a, in, out, blocks);
}

void conv2d_input_grad_onednn(const ir::ConvAttrs& a, Ins in, Outs out) {
  if (!is_bf16(in[0])) return input_grad<float, float>(a, in, out);
  if (is_bf16(out[0])) return input_grad<Bf16, Bf16>(a, in, out);
  input_grad<Bf16, float>(a, in, out);
}

void conv2d_weight_grad_onednn(const ir::ConvAttrs& a, Ins in, Outs out) {
  if (!is_bf16(in[0])) return weight_grad<float, float>(a, in, out);
  if (is_bf16(out[0])) return weight_grad<Bf16, Bf16>(a, in, out);
  weight_grad<Bf16, float>(a, in, out);
}

}  // namespace lt::rt
