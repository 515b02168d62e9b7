// Kernels along one axis that keep it (runtime/kernels/scan.cpp), called by run_nn.
#pragma once
#include "runtime/kernels/kernel.h"

namespace lt::rt {

/// Running sums along a.axis, from its end when a.reverse.
void cumsum(const ir::CumsumAttrs& a, Ins in, Outs out);
/// (values, i64 indices) of the a.k largest (smallest) along a.axis, sorted, ties by index.
void topk(const ir::TopKAttrs& a, Ins in, Outs out);

}  // namespace lt::rt
