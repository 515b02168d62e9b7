// Recording an op in lazy mode: a LazyNode whose outputs are pending tensors.
#include <atomic>
#include <utility>

#include "frontend/lazy/debug_log.h"
#include "frontend/lazy/lazy_node.h"
#include "frontend/lazy/live_tensors.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "ir/recycling_allocator.h"

namespace lt::lazy {

void trace_into(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                TypeList types, const Loc& loc, std::span<Tensor> outs) {
  static std::atomic<uint64_t> next_serial{0};
  auto node = make_recycled<LazyNode>();
  node->trace_serial = next_serial.fetch_add(1, std::memory_order_relaxed);
  node->op = op;
  node->attrs = attrs;
  node->loc = loc;
  if (debug_enabled()) node->loc_text = location_str(loc);
  node->inputs.reserve(inputs.size());
  for (const Tensor& x : inputs) {
    TensorImpl* xi = x.impl();
    if (xi->pending()) node->inputs.push_back({xi->lazy, xi->lazy_index, nullptr, xi->type});
    else node->inputs.push_back({nullptr, 0, xi->buffer, xi->type});
  }
  node->types = std::move(types);
  for (size_t i = 0; i < node->types.size(); ++i) {
    auto impl = make_recycled<TensorImpl>();
    impl->type = node->types[i];
    impl->lazy = node;
    impl->lazy_index = static_cast<int>(i);
    track(impl);
    outs[i] = Tensor(std::move(impl));
  }
  count_traced(op, loc);
}

}  // namespace lt::lazy
