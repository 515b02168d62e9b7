// Recording an op in lazy mode: a LazyNode whose outputs are pending tensors.
#include <utility>

#include "frontend/lazy/lazy_node.h"
#include "frontend/lazy/live_tensors.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"

namespace lt::lazy {

std::vector<Tensor> trace(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                          std::vector<TensorType> types, const Loc& loc) {
  auto node = std::make_shared<LazyNode>();
  node->op = op;
  node->attrs = attrs;
  node->loc = loc;
  node->inputs.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    TensorImpl* xi = x.impl();
    if (xi->pending()) node->inputs.push_back({xi->lazy, xi->lazy_index, nullptr, xi->type});
    else node->inputs.push_back({nullptr, 0, xi->buffer, xi->type});
  }
  node->types = std::move(types);
  std::vector<Tensor> outs;
  outs.reserve(node->types.size());
  for (size_t i = 0; i < node->types.size(); ++i) {
    auto impl = std::make_shared<TensorImpl>();
    impl->type = node->types[i];
    impl->lazy = node;
    impl->lazy_index = static_cast<int>(i);
    track(impl);
    outs.emplace_back(std::move(impl));
  }
  count_traced(op, loc);
  return outs;
}

}  // namespace lt::lazy
