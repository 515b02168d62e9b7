// The autocast lists as data: PyTorch's CPU autocast (torch.autocast("cpu")) lower-precision list,
// for the ops lazytrain has. Everything else runs in f32, which is PyTorch's f32 list
// (reductions, softmax, log_softmax, losses, batch and layer norm, exp, log, ...) and its
// "promote" rule for ops whose operands are f32 anyway.
#include <algorithm>

#include "frontend/amp/autocast.h"

namespace lt::amp {
namespace {

struct AutocastRow {
  ir::Op op;
  AutocastPolicy policy;
};

constexpr AutocastRow kAutocastTable[] = {
    {ir::Op::MatMul, AutocastPolicy::LowerPrecision},  // matmul, linear, and their gradients
    {ir::Op::Conv2d, AutocastPolicy::LowerPrecision},  // conv2d and its gradients
};

}  // namespace

AutocastPolicy autocast_policy(ir::Op op) {
  const auto* row = std::find_if(std::begin(kAutocastTable), std::end(kAutocastTable),
                                 [&](const AutocastRow& r) { return r.op == op; });
  return row == std::end(kAutocastTable) ? AutocastPolicy::F32 : row->policy;
}

}  // namespace lt::amp
