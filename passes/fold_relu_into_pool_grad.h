// The ReLU gradient that follows a max pool's gradient, done by the pool's gradient itself.
#pragma once
#include "ir/graph.h"

namespace lt::passes {

/// where(a > 0, max_pool2d_grad(x, gy), 0), with x = a or x = relu(a) (the backward of
/// max_pool2d(relu(a))), becomes max_pool2d_grad(x, gy) {through_relu=true}: a window whose
/// maximum is not above 0 passes no gradient. Exact, NaN included: a gradient only reaches the
/// pixel holding its window's maximum m, where a > 0 exactly when m > 0. The pool's gradient
/// must have no other reader and the 0 of the where must be +0 (the kernel writes +0). The
/// comparison goes dead, so the activation's mask is no longer written, and the gradient is
/// written once instead of twice. Returns true if the graph changed.
bool fold_relu_into_pool_grad(ir::Graph& g);

}  // namespace lt::passes
