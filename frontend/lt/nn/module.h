// The base of every layer, in the style of PyTorch's C++ frontend: parameters, buffers and
// submodules registered under names, so a model's tensors can be listed, switched between
// training and evaluation, saved and loaded by dotted name ("layer1.0.conv1.weight").
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lt/serialize.h"
#include "lt/tensor.h"

namespace lt::nn {

/// Tensors by (dotted) name, in registration order: a module's own tensors first, then each
/// submodule's in the order the submodules were registered (PyTorch's order).
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
class Module;
using NamedModules = std::vector<std::pair<std::string, std::shared_ptr<Module>>>;
/// The tensors a forward hook sees when it takes a module's inputs or outputs as a list.
using TensorList = std::vector<Tensor>;

/// Modules are held by std::shared_ptr (std::make_shared<nn::Linear>(784, 128)) and registered
/// in their parent with register_module. Registered tensors are handles: an in-place update
/// (p.sub_(...), copy_, load_state_dict) through any handle is seen by the module.
class Module : public std::enable_shared_from_this<Module> {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The class name without namespaces ("Linear", or a user's subclass), for messages and str().
  virtual std::string name() const;

  // --- registration (names are non-empty, hold no '.', and are unique within a module) ---
  /// Registers a parameter and returns its handle. It becomes a leaf that requires grad (unless
  /// `requires_grad` is false); an undefined tensor is not registered (a layer without bias).
  Tensor register_parameter(std::string name, Tensor t, bool requires_grad = true);
  /// Registers a buffer (state that is not trained: running statistics, counters). Persistent
  /// buffers are part of state_dict().
  Tensor register_buffer(std::string name, Tensor t, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> module) {
    add_child(std::move(name), module);
    return module;
  }

  // --- the module tree ---
  /// Every parameter of this module (and its descendants with recurse); a tensor registered
  /// twice (tied weights) is listed once, under its first name.
  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  /// Every buffer, persistent or not, listed like parameters().
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  /// The direct submodules.
  std::vector<std::shared_ptr<Module>> children() const;
  NamedModules named_children() const;
  /// This module, then every descendant depth first (PyTorch's order), each module once even
  /// if it is registered twice. With include_self the module must be held by a std::shared_ptr.
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  /// The same walk with dotted names: this module as `prefix` ("" by default), a descendant as
  /// "layers.0", under the first name it is reached by.
  NamedModules named_modules(const std::string& prefix = "", bool include_self = true) const;
  /// Calls fn on every descendant, children before their parent, then on this module.
  void apply(const std::function<void(Module&)>& fn);

  // --- modes and gradients ---
  /// Training mode (dropout on, batch statistics) for this module and every descendant.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Sets requires_grad on every parameter of this module and its descendants (freezing with
  /// false): a frozen parameter gets no gradient from backward(), and an optimizer skips a
  /// parameter whose gradient is undefined. A gradient it already has is kept (zero_grad drops
  /// it). Buffers are untouched.
  Module& requires_grad_(bool requires_grad = true);
  /// Drops every parameter's gradient (set_to_none), or sets the defined ones to zeros.
  void zero_grad(bool set_to_none = true);
  /// Elements of all parameters (a tied tensor counted once).
  int64_t num_parameters() const;

  // --- state ---
  /// Parameters and persistent buffers by dotted name (tied tensors under every name). The
  /// dict holds the module's own tensors, not copies: lt::save it, or copy from it.
  TensorDict state_dict() const;
  /// Copies `dict` into the module's tensors by name (cast to each tensor's dtype), through
  /// lt::copy_state. Strict: any missing key, unexpected key or shape mismatch throws lt::Error
  /// listing them all and changes no tensor. Not strict: every tensor whose name and shape
  /// match is copied, the rest is reported; a tensor is copied whole or not at all.
  LoadReport load_state_dict(const TensorDict& dict, bool strict = true, Loc loc = Loc::current());
  /// Casts every floating-point parameter and buffer to `dtype` in place (every handle sees the
  /// new dtype); gradients are dropped. Integer buffers (num_batches_tracked) keep theirs.
  void to(DType dtype, Loc loc = Loc::current());

  // --- forward hooks (PyTorch's register_forward_pre_hook / register_forward_hook) ---
  /// hook(module, input) runs before each forward of this module; a hook that returns a defined
  /// tensor replaces the input, one that returns nothing (or void) only reads it. Every layer of
  /// lt::nn runs its hooks; a module of one's own runs them where its forward goes through
  /// with_hooks. Hooks run in registration order; the id is for remove_hook.
  /// A hook may instead take the forward's tensors as a list, as PyTorch's take the input tuple:
  /// hook(module, const TensorList& inputs), returning void or a list of as many tensors to
  /// replace them (an empty list replaces nothing). MultiheadAttention's inputs are (query, key,
  /// value, key_padding_mask, attn_mask) and its outputs (attn_output, attn_weights); LSTM's
  /// (input, h_0, c_0) and (output, h_n, c_n); GRU's (input, h_0) and (output, h_n); a tensor
  /// not given (or not computed) is undefined. A one-tensor hook on these sees the first of each.
  template <class F>
  int register_forward_pre_hook(F&& hook) {
    if constexpr (std::is_invocable_v<F&, Module&, const Tensor&>) {
      using R = std::invoke_result_t<F&, Module&, const Tensor&>;
      return add_pre_hook([h = std::forward<F>(hook)](Module& m, const TensorList& in) mutable {
        if constexpr (std::is_void_v<R>) {
          h(m, in[0]);
          return TensorList();
        } else {
          return replace_first(in, Tensor(h(m, in[0])));
        }
      });
    } else {
      using R = std::invoke_result_t<F&, Module&, const TensorList&>;
      return add_pre_hook([h = std::forward<F>(hook)](Module& m, const TensorList& in) mutable {
        if constexpr (std::is_void_v<R>) {
          h(m, in);
          return TensorList();
        } else {
          return TensorList(h(m, in));
        }
      });
    }
  }
  /// hook(module, input, output) runs after each forward (the input as the pre-hooks left it);
  /// a defined tensor it returns replaces the output. The list form is
  /// hook(module, const TensorList& inputs, const TensorList& outputs).
  template <class F>
  int register_forward_hook(F&& hook) {
    if constexpr (std::is_invocable_v<F&, Module&, const Tensor&, const Tensor&>) {
      using R = std::invoke_result_t<F&, Module&, const Tensor&, const Tensor&>;
      return add_post_hook([h = std::forward<F>(hook)](Module& m, const TensorList& in,
                                                       const TensorList& out) mutable {
        if constexpr (std::is_void_v<R>) {
          h(m, in[0], out[0]);
          return TensorList();
        } else {
          return replace_first(out, Tensor(h(m, in[0], out[0])));
        }
      });
    } else {
      using R = std::invoke_result_t<F&, Module&, const TensorList&, const TensorList&>;
      return add_post_hook([h = std::forward<F>(hook)](Module& m, const TensorList& in,
                                                       const TensorList& out) mutable {
        if constexpr (std::is_void_v<R>) {
          h(m, in, out);
          return TensorList();
        } else {
          return TensorList(h(m, in, out));
        }
      });
    }
  }
  /// Removes a forward hook or pre-hook by the id its register call returned; an unknown id does
  /// nothing.
  void remove_hook(int id);

  /// The module tree in PyTorch's print format: "Name(extra_repr)", children indented by name.
  std::string str() const;
  /// What str() prints in this module's parentheses ("in_features=4, out_features=2, bias=true").
  virtual std::string extra_repr() const { return {}; }

 protected:
  /// forward(x) between this module's forward pre-hooks and hooks: a layer's forward is
  /// `return with_hooks(x, [&](const Tensor& x) { ... });` (nothing extra runs without hooks).
  template <class F>
  Tensor with_hooks(const Tensor& x, F&& forward) {
    if (!has_hooks()) return forward(x);
    return run_hooked({x}, [&](const TensorList& in) { return TensorList{Tensor(forward(in[0]))}; })
        .at(0);
  }
  /// The same for a forward of several tensors: `forward(inputs)` returns the outputs.
  TensorList with_hooks(TensorList inputs,
                        const std::function<TensorList(const TensorList&)>& forward) {
    if (!has_hooks()) return forward(inputs);
    return run_hooked(std::move(inputs), forward);
  }
  bool has_hooks() const { return !pre_hooks_.empty() || !post_hooks_.empty(); }

  /// The direct submodules in registration order, without a copy.
  const NamedModules& child_entries() const { return children_; }
  /// Puts `module` in the place of the submodule registered as `name`, which must exist (its
  /// name and position stay). For containers that look their modules up in child_entries().
  void set_child(const std::string& name, std::shared_ptr<Module> module);

 private:
  using PreHook = std::function<TensorList(Module&, const TensorList&)>;
  using PostHook = std::function<TensorList(Module&, const TensorList&, const TensorList&)>;
  int add_pre_hook(PreHook hook);
  int add_post_hook(PostHook hook);
  /// `list` with its first tensor replaced by `first`; nothing when `first` is undefined.
  static TensorList replace_first(const TensorList& list, Tensor first);
  TensorList run_hooked(TensorList inputs,
                        const std::function<TensorList(const TensorList&)>& forward);

  struct Entry {
    std::string name;
    Tensor tensor;
    bool persistent = true;
  };
  void check_new_name(const std::string& name, const char* what) const;
  void add_child(std::string name, std::shared_ptr<Module> module);
  /// Visits (dotted name, tensor) pairs of parameters or buffers in registration order.
  void visit(bool buffers, bool recurse, const std::string& prefix,
             const std::function<void(const std::string&, const Entry&)>& fn) const;
  NamedTensors named(bool buffers, bool recurse) const;

  std::vector<Entry> parameters_, buffers_;
  NamedModules children_;
  bool training_ = true;
  std::vector<std::pair<int, PreHook>> pre_hooks_;
  std::vector<std::pair<int, PostHook>> post_hooks_;
  int next_hook_id_ = 0;
};

}  // namespace lt::nn
