#include "frontend/dispatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "frontend/amp/autocast.h"
#include "frontend/autograd/grad_node.h"
#include "frontend/lazy/tracer.h"
#include "frontend/promotion.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "ir/recycling_allocator.h"
#include "ir/type_rules.h"
#include "lt/autocast.h"
#include "lt/autograd.h"
#include "lt/ops.h"
#include "lt/options.h"
#include "runtime/kernels/kernel.h"

namespace lt {

std::shared_ptr<TensorImpl> make_impl(TensorType type) {
  init();  // every eager tensor's data is made here: the settings are read before any kernel runs
  auto impl = make_recycled<TensorImpl>();
  impl->buffer = rt::Buffer::allocate(type.bytes());
  impl->type = std::move(type);
  return impl;
}

void fail_op(std::string_view op, std::string_view reason, std::span<const Tensor> operands,
             const Loc& loc) {
  std::string types;
  for (size_t i = 0; i < operands.size(); ++i)
    types += (i ? ", " : "") +
             (operands[i].defined() ? type_str(operands[i].type()) : std::string("undefined"));
  throw Error(fmt::format("{}: {} (operands: {}) at {}", op, reason, types, location_str(loc)));
}

namespace {

void record_grad(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                 std::span<Tensor> outputs, const Loc& loc) {
  // Most ops (no parameter upstream, eval, optimizer math) record nothing: decide that first.
  if (std::none_of(inputs.begin(), inputs.end(),
                   [](const Tensor& x) { return x.impl()->requires_grad; }))
    return;
  auto node = make_recycled<GradNode>(GradNode{op, attrs, {}, {}, {}, {}, {}, loc});
  record_node(std::move(node), inputs, outputs);
}

}  // namespace

void run_eager(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
               TypeList out_types, std::span<Tensor> outputs, const Loc& loc);

namespace {

/// An op's results: most ops have one, which needs no vector on the heap.
struct Results {
  Tensor one;
  std::vector<Tensor> many;
  std::span<Tensor> bind(size_t n) {
    if (n == 1) return {&one, 1};
    many.resize(n);
    return many;
  }
};

/// Type-checks the op, traces it or runs its eager kernel, and records its autograd history.
std::span<Tensor> dispatch(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
                           const Loc& loc, Results& results) {
  // The operands' types for the type rule, on the stack for the usual few operands.
  std::array<TensorType, 4> few;
  std::vector<TensorType> many(inputs.size() > few.size() ? inputs.size() : 0);
  const std::span<TensorType> in_types =
      many.empty() ? std::span<TensorType>(few).first(inputs.size()) : std::span<TensorType>(many);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      fail_op(ir::mnemonic(op), "operand is an undefined tensor", inputs, loc);
    const TensorImpl& xi = *inputs[i].impl();
    if (xi.unreadable) [[unlikely]]
      throw Error(*xi.unreadable);
    refresh_operand(inputs[i]);
    in_types[i] = inputs[i].type();
  }
  TypeList out_types;
  try {
    out_types = ir::infer_types(op, in_types, attrs);
  } catch (const TypeError& e) {
    fail_op(ir::mnemonic(op), e.what(), inputs, loc);
  }
  const std::span<Tensor> outputs = results.bind(out_types.size());
  if (lazy::tracing()) {
    lazy::trace_into(op, inputs, attrs, std::move(out_types), loc, outputs);
  } else {
    run_eager(op, inputs, attrs, std::move(out_types), outputs, loc);
  }
  if (grad_enabled() && ir::info(op).differentiable) record_grad(op, inputs, attrs, outputs, loc);
  return outputs;
}

}  // namespace

std::vector<Tensor> apply(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs,
                          const Loc& loc) {
  if (autocast_enabled())
    if (auto out = amp::autocast_apply(op, inputs, attrs, loc)) return std::move(*out);
  Results r;
  const std::span<Tensor> out = dispatch(op, inputs, attrs, loc, r);
  return r.many.empty() ? std::vector<Tensor>(out.begin(), out.end()) : std::move(r.many);
}

Tensor apply1(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs, const Loc& loc) {
  if (autocast_enabled())
    if (auto out = amp::autocast_apply(op, inputs, attrs, loc)) return (*out)[0];
  Results r;
  return dispatch(op, inputs, attrs, loc, r)[0];
}

Tensor apply1_promoted(ir::Op op, std::span<const Tensor> inputs, ir::Attrs attrs,
                       const Loc& loc) {
  std::optional<Promoted> p = promote(op, inputs, loc);
  if (!p) return apply1(op, inputs, std::move(attrs), loc);
  Tensor out = apply1(op, p->inputs, std::move(attrs), loc);
  return p->round_to ? cast(out, *p->round_to, loc) : out;
}

void run_eager(ir::Op op, std::span<const Tensor> inputs, const ir::Attrs& attrs,
               TypeList out_types, std::span<Tensor> outputs, const Loc& loc) {
  for (const Tensor& x : inputs)
    if (x.impl()->pending())
      fail_op(ir::mnemonic(op),
              "operand has pending lazy work; call lt::mark_step() first or run this op in lazy "
              "mode",
              inputs, loc);
  std::vector<rt::TensorRef> in_refs, out_refs;
  for (size_t i = 0; i < inputs.size(); ++i)
    in_refs.push_back({inputs[i].impl()->data(), &inputs[i].type()});
  for (size_t i = 0; i < out_types.size(); ++i) {
    outputs[i] = Tensor(make_impl(std::move(out_types[i])));
    out_refs.push_back({outputs[i].impl()->data(), &outputs[i].type()});
  }
  try {
    rt::run_kernel(op, attrs, in_refs, out_refs);
  } catch (const Error& e) {  // data-dependent faults (ids out of range): add where it happened
    throw Error(fmt::format("{} at {}", e.what(), location_str(loc)));
  }
}

}  // namespace lt
