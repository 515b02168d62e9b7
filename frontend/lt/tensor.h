// lt::Tensor: the handle users hold. Eager tensors own contiguous device data; lazy tensors (next
// layer) hold a pending IR value. Every op function takes the caller's source location so errors
// and syncs can name the user's line.
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "ir/dtype.h"
#include "ir/error.h"
#include "ir/shape.h"
#include "lt/scalar.h"

namespace lt {

using Loc = std::source_location;
struct TensorImpl;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  const TensorType& type() const;
  const Shape& shape() const { return type().shape; }
  DType dtype() const { return type().dtype; }
  int64_t rank() const { return type().rank(); }
  int64_t numel() const { return type().numel(); }
  /// Size of one axis; negative axes count from the end.
  int64_t size(int64_t axis) const;

  // --- autograd ---
  bool requires_grad() const;
  /// PyTorch's is_leaf: true for a tensor that does not require grad and for one that requires
  /// it and was made by no recorded op (a parameter); false for a recorded op's result. Reads no
  /// value (free in lazy mode).
  bool is_leaf() const;
  /// The autograd node that made this tensor, as the printed grad_fn names it ("MulBackward"; a
  /// custom function's name + "Backward"), or "" for a leaf. Reads no value.
  std::string grad_fn_name() const;
  /// Marks a leaf as a parameter whose gradient backward() accumulates into grad().
  Tensor& requires_grad_(bool on = true, Loc loc = Loc::current());
  /// The accumulated gradient (undefined before the first backward()).
  Tensor grad() const;
  void zero_grad();
  void set_grad(const Tensor& g);
  /// The same values with no autograd history: a view (PyTorch's detach), so an in-place op on
  /// it changes this tensor's values, and this tensor's changes are seen through it.
  Tensor detach() const;
  /// How many in-place writes this tensor's base and its views have had (PyTorch's _version).
  int64_t version() const;
  /// Calls hook(grad) each time backward() computes this tensor's gradient, before it goes on
  /// (to the op that made it, or into grad() of a leaf: once per backward, with the sum of its
  /// contributions), as PyTorch's Tensor.register_hook. A hook that returns a defined tensor
  /// replaces the gradient (same shape); one that returns nothing (or void) only reads it.
  /// Hooks run in registration order. Returns an id for remove_hook.
  template <class F>
  int register_hook(F&& hook, Loc loc = Loc::current()) const {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, const Tensor&>>)
      return add_hook([h = std::forward<F>(hook)](const Tensor& g) mutable {
        h(g);
        return Tensor();
      }, loc);
    else
      return add_hook(std::function<Tensor(const Tensor&)>(std::forward<F>(hook)), loc);
  }
  /// Removes a hook register_hook returned; an unknown id does nothing.
  void remove_hook(int id) const;
  /// Reverse-mode gradient of this scalar (or with the given output gradient) into every leaf.
  void backward(Loc loc = Loc::current()) const;
  void backward(const Tensor& grad_output, Loc loc = Loc::current()) const;

  // --- reading values (a sync point in lazy mode) ---
  template <class T>
  T item(Loc loc = Loc::current()) const;
  template <class T>
  std::vector<T> to_vector(Loc loc = Loc::current()) const;
  std::string str(Loc loc = Loc::current()) const;
  /// The memory outside lazytrain (from_blob's) that holds this tensor's value, once its pending
  /// in-place results are written there; nullptr when the value is in lazytrain's own storage,
  /// which in-place ops rebind and so never lend out.
  void* external_data(Loc loc = Loc::current()) const;

  // --- in place: the tensor is rebound to the new value, its shape and dtype kept: the op runs in
  // the promoted dtype and its result is cast back, unless that would lower its category
  // (PyTorch's "result type Float can't be cast to the desired output type Long"). On a view
  // (lt/ops.h: slice, reshape, permute...) the write goes to its base and every view of it. ---
  Tensor& add_(const Tensor& other, Loc loc = Loc::current());
  Tensor& sub_(const Tensor& other, Loc loc = Loc::current());
  Tensor& mul_(const Tensor& other, Loc loc = Loc::current());
  Tensor& add_(Scalar other, Loc loc = Loc::current());
  Tensor& mul_(Scalar other, Loc loc = Loc::current());
  Tensor& sub_(Scalar other, Loc loc = Loc::current());
  Tensor& div_(const Tensor& other, Loc loc = Loc::current());
  Tensor& div_(Scalar other, Loc loc = Loc::current());
  Tensor& copy_(const Tensor& src, Loc loc = Loc::current());
  Tensor& zero_(Loc loc = Loc::current());
  /// The number cast to this tensor's dtype (an integer tensor truncates it), as PyTorch.
  Tensor& fill_(Scalar value, Loc loc = Loc::current());
  Tensor& masked_fill_(const Tensor& mask, Scalar value, Loc loc = Loc::current());
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = {},
                 Loc loc = Loc::current());
  // The indexing ops' in-place forms (lt/ops.h: scatter, scatter_add, index_add, tril, triu).
  Tensor& scatter_(int64_t dim, const Tensor& index, const Tensor& src, Loc loc = Loc::current());
  Tensor& scatter_(int64_t dim, const Tensor& index, double value, Loc loc = Loc::current());
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src,
                       Loc loc = Loc::current());
  Tensor& index_add_(int64_t dim, const Tensor& index, const Tensor& src, double alpha = 1,
                     Loc loc = Loc::current());
  /// x[index] = values (or += where accumulate), as lt::index_put.
  Tensor& index_put_(const Tensor& index, const Tensor& values, bool accumulate = false,
                     Loc loc = Loc::current());
  Tensor& tril_(int64_t diagonal = 0, Loc loc = Loc::current());
  Tensor& triu_(int64_t diagonal = 0, Loc loc = Loc::current());

  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  /// This tensor's impl takes value's data (and its autograd history when keep_history); the
  /// in-place ops are rebinds, so every handle to the impl sees the new value.
  Tensor& rebind(const Tensor& value, const char* op, const Loc& loc, bool keep_history = true);
  int add_hook(std::function<Tensor(const Tensor&)> hook, const Loc& loc) const;
  /// rebind to an op's result, cast back to this tensor's dtype.
  Tensor& update(const Tensor& result, const char* op, const Loc& loc);
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// Copies host values into a new tensor of the given shape (numel must match).
template <class T>
Tensor from_vector(const std::vector<T>& values, Shape shape, Loc loc = Loc::current());
/// A tensor over memory that stays its owner's, as libtorch's from_blob: row-major values of
/// `shape` and `dtype` at `data` (aligned to its elements); `deleter` (if any) runs on
/// `data` when no tensor reads it any more. No copy in either direction: writes to the memory
/// are seen by the tensor, and the tensor's in-place ops (and writes through its views) put
/// their results into the memory, in lazy mode when the step runs.
Tensor from_blob(void* data, Shape shape, DType dtype, std::function<void(void*)> deleter = {},
                 Loc loc = Loc::current());
/// A 0-d tensor.
Tensor scalar(double value, DType dtype = DType::F32, Loc loc = Loc::current());

Tensor zeros(Shape shape, DType dtype = DType::F32, Loc loc = Loc::current());
Tensor ones(Shape shape, DType dtype = DType::F32, Loc loc = Loc::current());
Tensor full(Shape shape, double value, DType dtype = DType::F32, Loc loc = Loc::current());
Tensor zeros_like(const Tensor& t, Loc loc = Loc::current());
Tensor ones_like(const Tensor& t, Loc loc = Loc::current());
/// [start, stop) by step, like numpy.arange.
Tensor arange(double start, double stop, double step = 1, DType dtype = DType::I64,
              Loc loc = Loc::current());
/// U[0,1) and N(0,1) from the counter-based generator (see manual_seed).
Tensor rand(Shape shape, DType dtype = DType::F32, Loc loc = Loc::current());
Tensor randn(Shape shape, DType dtype = DType::F32, Loc loc = Loc::current());

/// Seeds the global generator; each draw advances its counter, so a seed fixes every draw in
/// eager mode, lazy mode and on every rank alike.
void manual_seed(uint64_t seed);

/// The global generator's position: its seed and the Philox counter of the next draw. A
/// checkpoint stores it so that a resumed run draws what the uninterrupted run would have.
struct RngState {
  uint64_t seed = 0;
  uint64_t counter = 0;
};
RngState rng_state();
void set_rng_state(const RngState& state);

}  // namespace lt
