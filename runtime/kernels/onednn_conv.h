// oneDNN's convolution primitives for one chunk of images on the calling thread (oneDNN's headers
// stay in the .cpp). f32, our layouts: NCHW activations, [O, C/groups, KH, KW] weights; each
// primitive runs in the blocked layouts oneDNN picks for it, with reorders on the way in and out.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

#include "runtime/kernels/conv_geom.h"

namespace lt::rt::onednn {

/// One pass's primitive for chunks of `chunk.n` images, and its reorders.
struct ConvPrimitives;

/// Created once per pass and chunk geometry, then cached. nullptr when oneDNN has no JIT kernel
/// for it (it would run its reference loops or its own im2col) or rejects the geometry.
std::shared_ptr<const ConvPrimitives> conv_primitives(ConvPass pass, const ConvGeom& chunk);

/// Bytes of the weights in the layout a Forward or InputGrad primitive reads; 0 when that layout
/// is ours.
size_t packed_weights_bytes(const ConvPrimitives& p);

/// The weights to pass to `p`: `w` itself, or w reordered into `packed` (packed_weights_bytes
/// bytes, 64-byte aligned). Each chunk then reads them without reordering them again.
const float* pack_weights(const ConvPrimitives& p, const float* w, void* packed);

/// Whether two primitives read the same weight layout (one packing serves both).
bool same_weight_layout(const ConvPrimitives& a, const ConvPrimitives& b);

/// The forward over one chunk (x: its first image). Then image by image, while it is in cache:
/// image i's output (NCHW) is written to image_out(i), and image_done(i, that pointer) is called
/// when given.
void conv_forward(const ConvPrimitives& p, const float* x, const float* packed_w,
                  const std::function<float*(int64_t)>& image_out,
                  const std::function<void(int64_t, float*)>& image_done);

/// gx = the input gradient of one chunk (gy and gx: its first image).
void conv_input_grad(const ConvPrimitives& p, const float* gy, const float* packed_w, float* gx);

/// gw = the weight gradient summed over one chunk's images (x and gy: its first image).
void conv_weight_grad(const ConvPrimitives& p, const float* x, const float* gy, float* gw);

}  // namespace lt::rt::onednn
