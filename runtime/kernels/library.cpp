// The library family's entry point: one kernel per row of ir/ops/library.def
// (library_kernels.h).
#include "ir/error.h"
#include "runtime/kernels/library_kernels.h"

namespace lt::rt {

void run_library(ir::LibraryOp op, const ir::Attrs& attrs, Ins in, Outs out,
                 const OutputBlocks* blocks) {
  using ir::LibraryOp;
  LT_CHECK(!blocks || op == LibraryOp::MatMul || op == LibraryOp::Conv2d,
           "library op {} takes no epilogue", ir::mnemonic(ir::to_op(op)));
  switch (op) {
    case LibraryOp::MatMul: return matmul(std::get<ir::MatMulAttrs>(attrs), in, out, blocks);
    case LibraryOp::Conv2d: return conv2d(std::get<ir::ConvAttrs>(attrs), in, out, blocks);
    case LibraryOp::Conv2dInputGrad:
      return conv2d_input_grad(std::get<ir::ConvAttrs>(attrs), in, out);
    case LibraryOp::Conv2dWeightGrad:
      return conv2d_weight_grad(std::get<ir::ConvAttrs>(attrs), in, out);
    case LibraryOp::MaxPool2d: return max_pool2d(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::MaxPool2dGrad: return max_pool2d_grad(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::AvgPool2d: return avg_pool2d(std::get<ir::PoolAttrs>(attrs), in, out);
    case LibraryOp::AvgPool2dGrad: return avg_pool2d_grad(std::get<ir::PoolAttrs>(attrs), in, out);
  }
  LT_UNREACHABLE();
}

}  // namespace lt::rt
