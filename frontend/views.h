// Views that write through, by functionalization. Every tensor keeps its own contiguous value
// (eager data or a lazy IR value); a tensor that PyTorch would make share its base's storage
// also keeps a ViewLink: its root base, the view ops from the root to it, and the strides
// PyTorch would give it. Writing a view in place writes the root (the chain run backwards: a
// slice becomes a masked select into the root), and bumps the root's version; a view whose root
// changed since its value was computed recomputes it from the root before it is next read. In
// lazy mode both are traced ops, so the step graph updates the root's buffer like any other
// in-place update.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "ir/attrs.h"
#include "ir/op.h"
#include "lt/tensor.h"

namespace lt {

/// One view op from a view's parent to it: Reshape, Permute, Expand or Slice.
struct ViewStep {
  ir::Op op;
  ir::Attrs attrs;
};

struct ViewLink {
  std::shared_ptr<TensorImpl> root;  // never itself a view
  std::vector<ViewStep> steps;       // root to this view, in order
  Shape strides;                     // PyTorch's strides over the root's storage
  int64_t offset = 0;                // and storage offset
  uint64_t synced = 0;               // the root's version this view's value was computed at
  bool differentiable = true;        // false through detach(): writes carry no history
  bool track_grad = true;            // made with grad mode on: its value is recorded from root
  bool covers_root = true;           // only reshapes and permutes: every element of the root
};

/// The tensor's version counter, made on first use; a view shares its root's.
const std::shared_ptr<VersionCounter>& version_counter(TensorImpl& t);

/// PyTorch's strides for t: its view's, or contiguous.
Shape strides_of(const TensorImpl& t);
/// torch's is_contiguous: each axis of size > 1 strides over the product of the later ones.
bool is_contiguous(const Shape& sizes, const Shape& strides);
/// The strides a view of `sizes` reshaped to `new_sizes` would have, or none where the layout
/// cannot be viewed that way (PyTorch's computeStride).
std::optional<Shape> reshaped_strides(const Shape& sizes, const Shape& strides,
                                      const Shape& new_sizes);

/// Makes out, the result of `op` on x, a view of x's root.
void link_view(const Tensor& x, Tensor& out, ir::Op op, ir::Attrs attrs);
/// Makes out a view of x's root reached from x through `steps`, view ops that compute its value
/// and, run backwards, write it: for a view no one view op makes (diagonal), whose layout over
/// the root's storage is given (strides, and the offset added to x's).
void link_view_steps(const Tensor& x, Tensor& out, std::vector<ViewStep> steps, Shape strides,
                     int64_t offset);
/// A value-only view of x (detach()): reads follow x, writes change x's values but not its
/// autograd history.
Tensor alias_view(const Tensor& x);

void refresh_view(const std::shared_ptr<TensorImpl>& t);
/// Before a tensor's value is read: a view whose root changed takes its new value from it.
inline void refresh(const Tensor& x) {
  const TensorImpl& t = *x.impl();
  if (t.view && t.view->root->version->value != t.view->synced) refresh_view(x.impl_ptr());
}
/// refresh for an op's operand. A traced read of a view that holds device data and covers its
/// whole root (reshapes and permutes) traces it from the root instead: a write through it then
/// replaces the root from the root's own buffer, which the step can update in place.
inline void refresh_operand(const Tensor& x) {
  const TensorImpl& t = *x.impl();
  if (t.view && (t.view->root->version->value != t.view->synced ||
                 (t.buffer && t.view->covers_root && lazy::tracing())))
    refresh_view(x.impl_ptr());
}

/// How an in-place update treats the autograd history of the tensor it writes.
enum class History {
  Take,  // the new value's (an op's result)
  Drop,  // none: the new value is a constant (copy_ of data)
  Keep,  // the tensor's own: only its values change (writes through detach())
};
/// The in-place update of t (a base, not a view) to value. t's version is not bumped here.
void assign_value(const std::shared_ptr<TensorImpl>& t, const Tensor& value, History history);
/// Writes value (t's type) through view t into its root, bumping the root's version.
void write_through(const std::shared_ptr<TensorImpl>& t, const Tensor& value, History history,
                   const char* op, const Loc& loc);

/// The same value with no autograd history and no view link: what autograd saves (values are
/// never written in place, so a snapshot stays valid when its tensor is rebound).
Tensor snapshot(const Tensor& x);

}  // namespace lt
