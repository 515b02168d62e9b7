#include "lt/tensor.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <utility>

#include "frontend/autograd/grad_node.h"
#include "frontend/dispatch.h"
#include "frontend/lazy/lazy_node.h"
#include "frontend/lazy/tracer.h"
#include "frontend/promotion.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "ir/recycling_allocator.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"
#include "lt/options.h"
#include "runtime/kernels/kernel.h"
#include "runtime/philox.h"

namespace lt {

const TensorType& Tensor::type() const {
  if (!impl_) throw Error("use of an undefined tensor");
  return impl_->type;
}

int64_t Tensor::size(int64_t axis) const {
  const int64_t r = rank();
  if (axis < -r || axis >= r)
    throw Error(fmt::format("size: axis {} out of range for {}", axis, type_str(type())));
  return shape()[axis < 0 ? axis + r : axis];
}

bool Tensor::requires_grad() const { return impl_ && impl_->requires_grad; }
bool Tensor::is_leaf() const { return !impl_ || !impl_->requires_grad || !impl_->grad_fn; }

Tensor& Tensor::requires_grad_(bool on, Loc loc) {
  if (impl_->grad_fn)
    throw Error(fmt::format("requires_grad_: only leaf tensors can be marked, this one is the "
                            "result of {} at {}",
                            node_name(*impl_->grad_fn), location_str(loc)));
  if (on && !is_float(dtype()))
    throw Error(fmt::format("requires_grad_: only float tensors can require grad, got {} at {}",
                            type_str(type()), location_str(loc)));
  impl_->requires_grad = on;
  return *this;
}

Tensor Tensor::grad() const { return impl_ && impl_->grad ? Tensor(impl_->grad) : Tensor(); }
void Tensor::zero_grad() { impl_->grad.reset(); }
void Tensor::set_grad(const Tensor& g) {
  impl_->grad = g.defined() ? snapshot(g).impl_ptr() : nullptr;
}

Tensor Tensor::detach() const {
  if (!impl_) throw Error("detach: use of an undefined tensor");
  return alias_view(*this);
}

int64_t Tensor::version() const {
  return impl_ && impl_->version ? static_cast<int64_t>(impl_->version->value) : 0;
}

void Tensor::backward(Loc loc) const {
  if (numel() != 1)
    throw Error(fmt::format("backward: needs a scalar or an explicit gradient, got {} at {}",
                            type_str(type()), location_str(loc)));
  backward(ones_like(*this, loc), loc);
}

void Tensor::backward(const Tensor& grad_output, Loc loc) const {
  if (!requires_grad())
    throw Error(fmt::format("backward: {} does not require grad (no parameter reaches it) at {}",
                            type_str(type()), location_str(loc)));
  if (grad_output.type() != type())
    throw Error(fmt::format("backward: gradient {} does not match {} at {}",
                            type_str(grad_output.type()), type_str(type()), location_str(loc)));
  run_backward(*this, grad_output);
}

// --- values -------------------------------------------------------------------------------

template <class T>
std::vector<T> Tensor::to_vector(Loc loc) const {
  if (!impl_)
    throw Error(fmt::format("to_vector: the tensor is undefined at {}", location_str(loc)));
  lazy::sync(*this, "to_vector", loc);
  ModeGuard eager(Mode::Eager);  // the conversion below runs now, on materialized data
  Tensor src = *this;
  if constexpr (std::is_same_v<T, float>) {
    if (dtype() != DType::F32) src = cast(*this, DType::F32, loc);
  } else if constexpr (std::is_same_v<T, double>) {
    if (dtype() != DType::F64) src = cast(*this, DType::F64, loc);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (dtype() != DType::I64) src = cast(*this, DType::I64, loc);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (dtype() != DType::I32) src = cast(*this, DType::I32, loc);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (dtype() != DType::Bool) src = cast(*this, DType::Bool, loc);
  }
  const T* p = src.impl()->as<T>();
  return std::vector<T>(p, p + numel());
}

template <class T>
T Tensor::item(Loc loc) const {
  if (!impl_) throw Error(fmt::format("item: the tensor is undefined at {}", location_str(loc)));
  if (numel() != 1)
    throw Error(fmt::format("item: needs one element, got {} at {}", type_str(type()),
                            location_str(loc)));
  lazy::sync(*this, "item", loc);
  return to_vector<T>(loc)[0];
}

void* Tensor::external_data(Loc loc) const {
  if (!impl_) throw Error(fmt::format("external_data: the tensor is undefined at {}",
                                      location_str(loc)));
  refresh(*this);
  if (!impl_->external && !(impl_->buffer && impl_->buffer->external())) return nullptr;
  lazy::sync(*this, "external_data", loc);
  return impl_->buffer->external() ? impl_->buffer->data() : nullptr;
}

#define LT_VALUE_TYPE(T)                                     \
  template std::vector<T> Tensor::to_vector<T>(Loc) const;  \
  template T Tensor::item<T>(Loc) const;                     \
  template Tensor from_vector<T>(const std::vector<T>&, Shape, Loc);
LT_VALUE_TYPE(float)
LT_VALUE_TYPE(double)
LT_VALUE_TYPE(int32_t)
LT_VALUE_TYPE(int64_t)
LT_VALUE_TYPE(bool)

// --- in place -------------------------------------------------------------------------------

Tensor& Tensor::rebind(const Tensor& value, const char* op, const Loc& loc, bool keep_history) {
  if (value.type() != type())
    throw Error(fmt::format("{}: result {} would change the type of {} at {}", op,
                            type_str(value.type()), type_str(type()), location_str(loc)));
  if (impl_->requires_grad && !impl_->grad_fn && grad_enabled())
    throw Error(fmt::format("{}: in-place update of a leaf that requires grad; wrap it in "
                            "lt::NoGradGuard at {}",
                            op, location_str(loc)));
  // Without grad mode an in-place op records nothing: the tensor keeps its history (PyTorch's).
  const History history = !grad_enabled() ? History::Keep
                          : keep_history  ? History::Take
                                          : History::Drop;
  if (impl_->view) {
    write_through(impl_, value, history, op, loc);
    return *this;
  }
  assign_value(impl_, value, history);
  return *this;
}

Tensor& Tensor::update(const Tensor& result, const char* op, const Loc& loc) {
  if (result.dtype() == dtype()) return rebind(result, op, loc);
  if (!can_cast(result.dtype(), dtype()))
    throw Error(fmt::format("{}: result type {} can't be cast to the desired output type {} at {}",
                            op, torch_name(result.dtype()), torch_name(dtype()),
                            location_str(loc)));
  return rebind(cast(result, dtype(), loc), op, loc);
}

Tensor& Tensor::add_(const Tensor& o, Loc loc) { return update(add(*this, o, loc), "add_", loc); }
Tensor& Tensor::sub_(const Tensor& o, Loc loc) { return update(sub(*this, o, loc), "sub_", loc); }
Tensor& Tensor::mul_(const Tensor& o, Loc loc) { return update(mul(*this, o, loc), "mul_", loc); }
Tensor& Tensor::add_(Scalar o, Loc loc) {
  return update(add(*this, wrap_number(o, *this, loc), loc), "add_", loc);
}
Tensor& Tensor::mul_(Scalar o, Loc loc) {
  return update(mul(*this, wrap_number(o, *this, loc), loc), "mul_", loc);
}
Tensor& Tensor::copy_(const Tensor& src, Loc loc) {
  Tensor v = src.dtype() == dtype() ? src : cast(src, dtype(), loc);
  if (v.shape() != shape()) v = expand(v, shape(), loc);
  return rebind(v, "copy_", loc);  // differentiable in src, as PyTorch's copy_
}
Tensor& Tensor::zero_(Loc loc) { return rebind(zeros_like(*this, loc), "zero_", loc); }
Tensor& Tensor::sub_(Scalar o, Loc loc) {
  return update(sub(*this, wrap_number(o, *this, loc), loc), "sub_", loc);
}
Tensor& Tensor::div_(const Tensor& o, Loc loc) { return update(div(*this, o, loc), "div_", loc); }
Tensor& Tensor::div_(Scalar o, Loc loc) {
  return update(div(*this, wrap_number(o, *this, loc), loc), "div_", loc);
}
Tensor& Tensor::fill_(Scalar value, Loc loc) {
  // PyTorch casts the number to the tensor's dtype: an integer tensor truncates it.
  double v = value.value();
  if (dtype() == DType::Bool) v = v != 0;
  else if (!is_float(dtype())) v = std::trunc(v);
  return rebind(full(shape(), v, dtype(), loc), "fill_", loc, /*keep_history=*/false);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value, Loc loc) {
  return update(masked_fill(*this, mask, value.value(), loc), "masked_fill_", loc);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max, Loc loc) {
  return update(clamp(*this, min, max, loc), "clamp_", loc);
}

// --- creation -------------------------------------------------------------------------------

template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Loc loc) {
  DType dt = DType::F32;
  if constexpr (std::is_same_v<T, double>) dt = DType::F64;
  if constexpr (std::is_same_v<T, int32_t>) dt = DType::I32;
  if constexpr (std::is_same_v<T, int64_t>) dt = DType::I64;
  if constexpr (std::is_same_v<T, bool>) dt = DType::Bool;
  for (int64_t d : shape)
    if (d < 0)
      throw Error(fmt::format("from_vector: negative size in {} at {}", shape_str(shape),
                              location_str(loc)));
  if (static_cast<int64_t>(values.size()) != numel(shape))
    throw Error(fmt::format("from_vector: {} values do not fill shape {} at {}", values.size(),
                            shape_str(shape), location_str(loc)));
  auto impl = make_impl({dt, std::move(shape)});
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) impl->as<bool>()[i] = values[i];
  } else {
    if (!values.empty()) std::memcpy(impl->data(), values.data(), values.size() * sizeof(T));
  }
  return Tensor(std::move(impl));
}

Tensor from_blob(void* data, Shape shape, DType dtype, std::function<void(void*)> deleter,
                 Loc loc) {
  for (int64_t d : shape)
    if (d < 0)
      throw Error(fmt::format("from_blob: negative size in {} at {}", shape_str(shape),
                              location_str(loc)));
  if (reinterpret_cast<uintptr_t>(data) % dtype_size(dtype) != 0)
    throw Error(fmt::format("from_blob: data at {} is not aligned to its {}-byte elements at {}",
                            fmt::ptr(data), dtype_size(dtype), location_str(loc)));
  init();  // the settings are read before any kernel runs, as for every eager tensor
  TensorType type{dtype, std::move(shape)};
  std::shared_ptr<void> owner;
  if (deleter) owner = std::shared_ptr<void>(data, std::move(deleter));
  auto impl = make_recycled<TensorImpl>();
  impl->buffer = rt::Buffer::wrap(data, type.bytes(), std::move(owner));
  impl->external = impl->buffer;
  impl->type = std::move(type);
  return Tensor(std::move(impl));
}

Tensor full(Shape shape, double value, DType dtype, Loc loc) {
  const bool special = value == 0 || value == 1 || value == -1;
  if (!lazy::tracing() || special)
    return apply1(ir::Op::Full, {}, ir::FullAttrs{std::move(shape), dtype, value}, loc);
  // Any other value enters the graph as a 0-d parameter (device data made now), so a value that
  // changes every step (a learning rate) never changes the graph, and so never recompiles.
  Tensor s;
  if (holds_value(dtype, value)) {
    // A traced step makes hundreds of these (the norms' and the optimizer's coefficients): the
    // kernel fills it directly, without the type rule and dispatch of an op.
    s = Tensor(make_impl(TensorType{dtype, {}}));
    const rt::TensorRef out{s.impl()->data(), &s.type()};
    rt::run_creation(ir::CreationOp::Full, ir::FullAttrs{{}, dtype, value}, {}, {&out, 1});
  } else {
    ModeGuard eager(Mode::Eager);
    s = apply1(ir::Op::Full, {}, ir::FullAttrs{{}, dtype, value}, loc);  // throws the type error
  }
  return shape.empty() ? s : expand(s, std::move(shape), loc);
}
Tensor scalar(double value, DType dtype, Loc loc) { return full({}, value, dtype, loc); }
Tensor constant(double value, DType dtype, Loc loc) {
  return apply1(ir::Op::Full, {}, ir::FullAttrs{{}, dtype, value}, loc);
}
Tensor zeros(Shape shape, DType dtype, Loc loc) { return full(std::move(shape), 0, dtype, loc); }
Tensor ones(Shape shape, DType dtype, Loc loc) { return full(std::move(shape), 1, dtype, loc); }
Tensor zeros_like(const Tensor& t, Loc loc) { return zeros(t.shape(), t.dtype(), loc); }
Tensor ones_like(const Tensor& t, Loc loc) { return ones(t.shape(), t.dtype(), loc); }

Tensor arange(double start, double stop, double step, DType dtype, Loc loc) {
  if (step == 0) throw Error(fmt::format("arange: step must be nonzero at {}", location_str(loc)));
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((stop - start) / step)));
  return apply1(ir::Op::Iota, {}, ir::IotaAttrs{n, dtype, start, step}, loc);
}

namespace {
struct Generator {
  uint64_t seed = 0x853c49e6748fea9bULL;
  uint64_t counter = 0;
};
Generator& generator() {
  static Generator g;
  return g;
}

Tensor random(ir::Op op, Shape shape, DType dtype, Loc loc) {
  Generator& g = generator();
  const int64_t n = numel(shape);
  Tensor key = from_vector<int64_t>({static_cast<int64_t>(g.seed)}, {}, loc);
  Tensor ctr = from_vector<int64_t>({static_cast<int64_t>(g.counter)}, {}, loc);
  Tensor out =
      apply1(op, std::vector<Tensor>{key, ctr}, ir::RandomAttrs{std::move(shape), dtype}, loc);
  g.counter += rt::philox_blocks(n);
  return out;
}
}  // namespace

void manual_seed(uint64_t seed) { generator() = Generator{seed, 0}; }
RngState rng_state() { return {generator().seed, generator().counter}; }
void set_rng_state(const RngState& state) { generator() = Generator{state.seed, state.counter}; }
Tensor rand(Shape shape, DType dtype, Loc loc) {
  return random(ir::Op::RandUniform, std::move(shape), dtype, loc);
}
Tensor randn(Shape shape, DType dtype, Loc loc) {
  return random(ir::Op::RandNormal, std::move(shape), dtype, loc);
}

}  // namespace lt
