// The library family's kernels, one function per op; run_library (library.cpp) switches over
// them. Internal to runtime/kernels.
#pragma once
#include "ir/attrs.h"
#include "runtime/kernels/kernel.h"

namespace lt::rt {

// matmul.cpp, over gemm.h.
void matmul(const ir::MatMulAttrs& a, Ins in, Outs out, const OutputBlocks* blocks = nullptr);

// conv.cpp: NCHW input, [O, C/groups, KH, KW] weight.
void conv2d(const ir::ConvAttrs& a, Ins in, Outs out,             // (x, w) -> y
            const OutputBlocks* blocks = nullptr);
void conv2d_input_grad(const ir::ConvAttrs& a, Ins in, Outs out);  // (grad_y, w) -> grad_x
void conv2d_weight_grad(const ir::ConvAttrs& a, Ins in, Outs out); // (x, grad_y) -> grad_w

// pool.cpp
void max_pool2d(const ir::PoolAttrs& a, Ins in, Outs out);       // x -> y
void max_pool2d_grad(const ir::PoolAttrs& a, Ins in, Outs out);  // (x, grad_y) -> grad_x
void avg_pool2d(const ir::PoolAttrs& a, Ins in, Outs out);       // x -> y
void avg_pool2d_grad(const ir::PoolAttrs& a, Ins in, Outs out);  // grad_y -> grad_x

}  // namespace lt::rt
