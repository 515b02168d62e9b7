// What a Tensor handle points to. Internal to the frontend: users see only lt::Tensor.
#pragma once
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/shape.h"
#include "runtime/buffer.h"

namespace lt {

class Tensor;
struct GradNode;
struct LazyNode;
struct ViewLink;
struct TensorImpl;

/// Counts the in-place writes of a base and its views (PyTorch's _version): autograd compares it
/// with the version a saved value had.
struct VersionCounter {
  uint64_t value = 0;
  std::vector<std::weak_ptr<TensorImpl>> views;  // of this base: their values go stale on writes
};

struct TensorImpl {
  TensorType type;
  std::shared_ptr<rt::Buffer> buffer;  // contiguous data (eager, or lazy after materializing)
  std::shared_ptr<LazyNode> lazy;      // pending lazy value (output lazy_index of that node)
  int lazy_index = 0;
  std::weak_ptr<rt::Buffer> donor;  // device data this tensor held before an in-place rebind
  // Set on a tensor made over external memory (from_blob): its storage for good. An in-place
  // result is copied into it (a pending one when its graph has run), so that the memory's owner
  // sees it, as numpy sees PyTorch's writes to a tensor from torch.from_numpy.
  std::shared_ptr<rt::Buffer> external;
  std::shared_ptr<VersionCounter> version;  // made when first saved or viewed (views.h)
  std::shared_ptr<ViewLink> view;           // set on a view of a base (views.h)
  // Set on an autograd snapshot whose tensor was written in place after it was saved: reading
  // it throws this (PyTorch's version-counter error).
  std::shared_ptr<const std::string> unreadable;

  // Autograd. A leaf that requires grad has no grad_fn; a result of a differentiable op has one.
  bool requires_grad = false;
  std::shared_ptr<GradNode> grad_fn;
  int output_nr = 0;
  std::shared_ptr<TensorImpl> grad;
  // A leaf's post-accumulate-grad hooks (lt/autograd.h), with their ids.
  std::vector<std::pair<int, std::function<void(const std::shared_ptr<TensorImpl>&)>>> grad_hooks;
  // A leaf's gradient hooks (Tensor::register_hook), with their ids; a non-leaf's live on its
  // grad_fn node.
  std::vector<std::pair<int, std::function<Tensor(const Tensor&)>>> tensor_hooks;

  bool pending() const { return !buffer && lazy; }
  void* data() const { return buffer->data(); }
  template <class T>
  T* as() const { return static_cast<T*>(buffer->data()); }
};

/// A new tensor with fresh storage for `type`.
std::shared_ptr<TensorImpl> make_impl(TensorType type);

}  // namespace lt
