// Channels-last convolutions on the paths that take only NCHW activations (im2col: f64, and
// geometries oneDNN has no JIT kernel for or is slower on): the activations are permuted to NCHW,
// the NCHW entry point runs, and its result is permuted back.
#include <optional>
#include <span>
#include <vector>

#include "runtime/kernels/conv_paths.h"
#include "runtime/kernels/image_scratch.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/library_kernels.h"

namespace lt::rt {
namespace {

/// [N, H, W, C] to [N, C, H, W] (to_nchw) or back, by the permute view kernel (blocked
/// transposes).
void permute(const TensorRef& from, void* to, bool to_nchw) {
  const Shape& s = from.shape();
  const ir::PermuteAttrs perm{to_nchw ? ir::Ints{0, 3, 1, 2} : ir::Ints{0, 2, 3, 1}};
  const TensorType type{from.dtype(), to_nchw ? Shape{s[0], s[3], s[1], s[2]}
                                              : Shape{s[0], s[2], s[3], s[1]}};
  const TensorRef out[] = {{to, &type}};
  run_view(ir::ViewOp::Permute, perm, std::span(&from, 1), out);
}

Shape nchw(const Shape& s) { return {s[0], s[3], s[1], s[2]}; }

/// An NCHW copy of a channels-last tensor, with its type.
struct NchwCopy {
  TensorType type;
  std::vector<char> bytes;
  explicit NchwCopy(const TensorRef& t)
      : type{t.dtype(), nchw(t.shape())}, bytes(t.numel() * dtype_size(t.dtype())) {
    permute(t, bytes.data(), true);
  }
  TensorRef ref() { return {bytes.data(), &type}; }
};

}  // namespace

void conv_channels_last_via_nchw(ConvPass pass, const ir::ConvAttrs& a, Ins in, Outs out,
                                 const OutputBlocks* blocks) {
  ir::ConvAttrs na = a;
  na.channels_last = false;
  const bool weight_grad = pass == ConvPass::WeightGrad;
  // Forward: (x, w) -> y; input grad: (gy, w) -> gx; weight grad: (x, gy) -> gw.
  NchwCopy in0(in[0]);
  std::optional<NchwCopy> in1;  // the weight gradient's gy; the others' second operand is w
  if (weight_grad) in1.emplace(in[1]);
  const TensorRef nin[] = {in0.ref(), in1 ? in1->ref() : in[1]};
  if (weight_grad) return conv2d_weight_grad(na, nin, out);
  const TensorRef& y = out[0];
  TensorType ny_type{y.dtype(), nchw(y.shape())};
  std::vector<char> ny(y.numel() * dtype_size(y.dtype()));
  const TensorRef nout[] = {{ny.data(), &ny_type}};
  if (pass == ConvPass::InputGrad) {
    na.grad_shape = nchw(a.grad_shape);
    conv2d_input_grad(na, nin, nout);
  } else {
    conv2d(na, nin, nout, nullptr);
  }
  // The output whole (or, not written whole, in scratch), then the epilogue's blocks.
  ImageScratch<char> scratch(y.data ? 0 : ny.size());
  void* dst = y.data ? y.data : scratch.at(0);
  permute(nout[0], dst, false);
  if (!blocks) return;
  const int64_t elem = dtype_size(y.dtype());
  for (int64_t b = 0; b < y.numel(); b += blocks->block_elems)
    blocks->done(b, b + blocks->block_elems, static_cast<const char*>(dst) + b * elem);
}

}  // namespace lt::rt
