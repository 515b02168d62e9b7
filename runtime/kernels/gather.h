// Kernels that read or write x at an index tensor's positions along one axis
// (runtime/kernels/gather.cpp), called by run_nn.
#pragma once
#include "runtime/kernels/kernel.h"

namespace lt::rt {

/// (x, index i64) -> y of the index's shape: y[c] = x[c with c[axis] = index[c]].
void gather(int64_t axis, Ins in, Outs out);
/// (x, index i64, src) -> a copy of x with y[c with c[axis] = index[c]] = src[c] (scatter) or
/// += src[c] (scatter_add), in the index's order along the axis.
void scatter(int64_t axis, bool add, Ins in, Outs out);

}  // namespace lt::rt
