// Layout assignment for convolutions.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// Runs conv2d and its gradients on channels-last activations ([N, H, W, C]), which oneDNN
/// convolves without reordering them to its blocked layouts and back, and keeps the values between
/// convolutions channels-last where the ops on them do not depend on the layout: elementwise ops
/// whose operands are all rank 4 or scalars, batch norm and its gradient (their channel axis moves
/// to 3), sum, mean, max and min (their axes move), and an optimization barrier's operands (each
/// passes through in its form). Everything else reads the NCHW form, and a permute converts
/// wherever one form is needed and only the other exists. Convolutions on f64, or with fewer than
/// 16 input channels per group, keep NCHW: their im2col path would only permute back; so does a
/// pointwise (1x1, stride 1) convolution on a map of 28x28 or more, with its gradients, whose input
/// is such a depthwise convolution's output through elementwise ops and batch norms (a separable
/// block): the runtime runs it on NCHW as a GEMM per image, and channels-last would only add
/// permutes. Except one of a single input channel (a network's stem on gray images), whose input is
/// the same bytes in either layout: its forward goes channels-last into a multiple of 16 output
/// channels (the runtime's direct kernel for it), or in bf16 where a batch norm reads its result
/// (which would otherwise be permuted for it), its gradients where their output gradient is
/// channels-last already. Parameters, results and donations are kept. Returns true if the graph
/// changed.
bool channels_last(ir::Graph& g);

}  // namespace lt::passes
