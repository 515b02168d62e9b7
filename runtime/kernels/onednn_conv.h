// oneDNN's convolution primitives for one chunk of images on the calling thread (oneDNN's headers
// stay in the .cpp). f32 or bf16 operands in our layouts: NCHW or channels-last activations,
// [O, C/groups, KH, KW] weights. On NCHW activations each primitive runs in the blocked layouts
// oneDNN picks for it, with reorders on the way in and out; channels-last ones it reads and writes
// as they are. A bf16 primitive accumulates in f32; its weight gradient is f32 (the chunks' sums
// add up in f32 before the one rounding to bf16).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "ir/dtype.h"
#include "runtime/kernels/conv_geom.h"

namespace lt::rt::onednn {

/// One pass's primitive for chunks of `chunk.n` images, and its reorders.
struct ConvPrimitives;

/// Created once per pass, chunk geometry, operand dtype (F32 or BF16) and dtype of the forward's
/// or input gradient's result (the operands', or F32 for BF16 operands), then cached. nullptr when
/// oneDNN has no JIT kernel for it (it would run its reference loops or its own im2col; bf16 needs
/// a CPU with bf16 instructions) or rejects the geometry.
std::shared_ptr<const ConvPrimitives> conv_primitives(ConvPass pass, const ConvGeom& chunk,
                                                      DType dtype, DType out_dtype);

/// Bytes of the weights in the layout a Forward or InputGrad primitive reads; 0 when that layout
/// is ours.
size_t packed_weights_bytes(const ConvPrimitives& p);

/// The weights to pass to `p`: `w` itself, or w reordered into `packed` (packed_weights_bytes
/// bytes, 64-byte aligned). Each chunk then reads them without reordering them again.
const void* pack_weights(const ConvPrimitives& p, const void* w, void* packed);

/// Whether two primitives read the same weight layout (one packing serves both).
bool same_weight_layout(const ConvPrimitives& a, const ConvPrimitives& b);

/// The forward over one chunk (x: its first image). Then image by image, while it is in cache:
/// image i's output (NCHW, of the output's dtype) is written to image_out(i), and
/// image_done(i, that pointer) is called when given.
void conv_forward(const ConvPrimitives& p, const void* x, const void* packed_w,
                  const std::function<void*(int64_t)>& image_out,
                  const std::function<void(int64_t, void*)>& image_done);

/// Whether a Forward primitive writes our layout (channels-last activations): then
/// conv_forward_direct runs it, with no per-image reorder.
bool writes_our_layout(const ConvPrimitives& p);

/// The forward over one chunk, written straight to y (the chunk's first output image).
void conv_forward_direct(const ConvPrimitives& p, const void* x, const void* packed_w, void* y);

/// gx = the input gradient of one chunk (gy and gx: its first image).
void conv_input_grad(const ConvPrimitives& p, const void* gy, const void* packed_w, void* gx);

/// gw (f32 for either dtype) = the weight gradient summed over one chunk's images (x and gy: its
/// first image).
void conv_weight_grad(const ConvPrimitives& p, const void* x, const void* gy, float* gw);

}  // namespace lt::rt::onednn
