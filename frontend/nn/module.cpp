// Module: registration, the walks over the module tree, modes, state dicts and printing.
#include "lt/nn/module.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>
#include <typeinfo>

#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/autograd.h"
#include "lt/lazy.h"
#include "lt/ops.h"

namespace lt::nn {

std::string Module::name() const {
  const char* mangled = typeid(*this).name();
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  std::string full = status == 0 ? demangled.get() : mangled;
  // "lt::nn::Linear" -> "Linear"; namespaces inside template arguments stay.
  const size_t open = full.find('<');
  const size_t colons = full.rfind("::", open);
  return colons == std::string::npos ? full : full.substr(colons + 2);
}

void Module::check_new_name(const std::string& name, const char* what) const {
  if (name.empty()) throw Error(fmt::format("{}: empty name in {}", what, this->name()));
  if (name.find('.') != std::string::npos)
    throw Error(fmt::format("{}: name '{}' in {} contains '.' (dots separate the levels of a "
                            "dotted name)",
                            what, name, this->name()));
  auto taken = [&](const auto& list) {
    for (const auto& e : list)
      if (e.first == name) return true;
    return false;
  };
  bool used = taken(children_);
  for (const auto* list : {&parameters_, &buffers_})
    for (const Entry& e : *list) used = used || e.name == name;
  if (used)
    throw Error(fmt::format("{}: '{}' is already registered in {}", what, name, this->name()));
}

Tensor Module::register_parameter(std::string name, Tensor t, bool requires_grad) {
  check_new_name(name, "register_parameter");
  if (!t.defined()) return t;
  if (requires_grad && !is_float(t.dtype()))
    throw Error(fmt::format("register_parameter: '{}' in {} is {}; only floating-point "
                            "parameters can require grad",
                            name, this->name(), type_str(t.type())));
  t.requires_grad_(requires_grad);
  parameters_.push_back({std::move(name), t, true});
  return t;
}

Tensor Module::register_buffer(std::string name, Tensor t, bool persistent) {
  check_new_name(name, "register_buffer");
  if (!t.defined()) return t;
  buffers_.push_back({std::move(name), t, persistent});
  return t;
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name(name, "register_module");
  if (!module) throw Error(fmt::format("register_module: '{}' in {} is null", name, this->name()));
  if (module.get() == this)
    throw Error(fmt::format("register_module: '{}': a module cannot contain itself", name));
  children_.emplace_back(std::move(name), std::move(module));
}

void Module::set_child(const std::string& name, std::shared_ptr<Module> module) {
  if (!module) throw Error(fmt::format("register_module: '{}' in {} is null", name, this->name()));
  if (module.get() == this)
    throw Error(fmt::format("register_module: '{}': a module cannot contain itself", name));
  for (auto& [n, child] : children_) {
    if (n == name) {
      child = std::move(module);
      return;
    }
  }
  throw Error(fmt::format("register_module: no submodule '{}' in {} to replace", name,
                          this->name()));
}

void Module::visit(bool buffers, bool recurse, const std::string& prefix,
                   const std::function<void(const std::string&, const Entry&)>& fn) const {
  for (const Entry& e : buffers ? buffers_ : parameters_) fn(prefix + e.name, e);
  if (!recurse) return;
  for (const auto& [name, child] : children_) child->visit(buffers, true, prefix + name + ".", fn);
}

NamedTensors Module::named(bool buffers, bool recurse) const {
  NamedTensors out;
  std::set<const TensorImpl*> seen;
  visit(buffers, recurse, "", [&](const std::string& name, const Entry& e) {
    if (seen.insert(e.tensor.impl()).second) out.emplace_back(name, e.tensor);
  });
  return out;
}

NamedTensors Module::named_parameters(bool recurse) const { return named(false, recurse); }
NamedTensors Module::named_buffers(bool recurse) const { return named(true, recurse); }

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named(false, recurse)) out.push_back(t);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [_, t] : named(true, recurse)) out.push_back(t);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (const auto& [_, child] : children_) out.push_back(child);
  return out;
}

NamedModules Module::named_children() const { return children_; }

namespace {

std::string dotted(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

void walk_modules(const std::shared_ptr<Module>& m, const std::string& prefix,
                  std::vector<const Module*>& seen, NamedModules& out) {
  if (std::find(seen.begin(), seen.end(), m.get()) != seen.end()) return;
  seen.push_back(m.get());
  out.emplace_back(prefix, m);
  for (const auto& [name, child] : m->named_children())
    walk_modules(child, dotted(prefix, name), seen, out);
}

}  // namespace

NamedModules Module::named_modules(const std::string& prefix, bool include_self) const {
  NamedModules out;
  std::vector<const Module*> seen{this};
  if (include_self) {
    std::shared_ptr<Module> self = std::const_pointer_cast<Module>(weak_from_this().lock());
    if (!self)
      throw Error(fmt::format("named_modules: this {} is not held by a std::shared_ptr (make it "
                              "with std::make_shared), so it cannot be listed; pass "
                              "include_self = false to list its descendants",
                              name()));
    out.emplace_back(prefix, std::move(self));
  }
  for (const auto& [name, child] : children_) walk_modules(child, dotted(prefix, name), seen, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [_, m] : named_modules("", include_self)) out.push_back(std::move(m));
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (const auto& [_, child] : children_) child->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (const auto& [_, child] : children_) child->train(on);
}

// Checked before any change, so a module is frozen or unfrozen whole or not at all.
Module& Module::requires_grad_(bool requires_grad) {
  const NamedTensors params = named_parameters();
  if (requires_grad)
    for (const auto& [name, p] : params)
      if (!is_float(p.dtype()))
        throw Error(fmt::format("requires_grad_: parameter '{}' of {} is {}; only floating-point "
                                "parameters can require grad",
                                name, this->name(), type_str(p.type())));
  for (auto [_, p] : params) p.requires_grad_(requires_grad);
  return *this;
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    if (set_to_none) {
      p.zero_grad();
    } else if (p.grad().defined()) {
      p.set_grad(zeros_like(p.grad()));
    }
  }
}

int64_t Module::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

TensorDict Module::state_dict() const {
  TensorDict out;
  auto add = [&](const std::string& name, const Entry& e) {
    if (e.persistent) out.emplace(name, e.tensor);
  };
  visit(false, true, "", add);
  visit(true, true, "", add);
  return out;
}

LoadReport Module::load_state_dict(const TensorDict& dict, bool strict, Loc loc) {
  return copy_state(state_dict(), dict, strict, "load_state_dict", loc);
}

void Module::to(DType dtype, Loc loc) {
  if (!is_float(dtype))
    throw Error(fmt::format("to: {} is not a floating-point dtype at {}", dtype_name(dtype),
                            location_str(loc)));
  std::vector<Tensor> to_cast = parameters();
  for (const Tensor& b : buffers()) to_cast.push_back(b);
  std::erase_if(to_cast,
                [&](const Tensor& t) { return !is_float(t.dtype()) || t.dtype() == dtype; });
  lazy::sync(to_cast, "nn::Module::to", loc);  // every pending one, in one graph
  for (const Tensor& t : to_cast) {
    Tensor cast_value;
    {
      ModeGuard eager(Mode::Eager);
      NoGradGuard no_grad;
      cast_value = cast(snapshot(t), dtype, loc);
    }
    // In place on the shared impl, like PyTorch's `param.data = param.data.to(dtype)`: a rebind
    // keeps the dtype, and every handle (the layer's member, the registry, the caller's) must
    // see the change. Leaves hold no lazy node or history.
    TensorImpl& impl = *t.impl();
    impl.type = cast_value.type();
    impl.buffer = cast_value.impl()->buffer;
    impl.lazy.reset();
    impl.lazy_index = 0;
    impl.donor.reset();
    impl.external.reset();  // the new dtype's values are not the external memory's
    impl.grad.reset();
  }
}

int Module::add_pre_hook(PreHook hook) {
  pre_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

int Module::add_post_hook(PostHook hook) {
  post_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void Module::remove_hook(int id) {
  std::erase_if(pre_hooks_, [&](const auto& h) { return h.first == id; });
  std::erase_if(post_hooks_, [&](const auto& h) { return h.first == id; });
}

TensorList Module::replace_first(const TensorList& list, Tensor first) {
  if (!first.defined()) return {};
  TensorList out = list;
  out.at(0) = std::move(first);
  return out;
}

TensorList Module::run_hooked(TensorList inputs,
                              const std::function<TensorList(const TensorList&)>& forward) {
  // Copies: a hook may remove itself (or register another) while the list runs, as in PyTorch.
  const auto pre = pre_hooks_;
  const auto post = post_hooks_;
  auto check = [&](const TensorList& replaced, const TensorList& was, const char* what) {
    if (replaced.size() != was.size())
      throw Error(fmt::format("a forward {} of {} returned {} tensors in place of its {}", what,
                              name(), replaced.size(), was.size()));
  };
  for (const auto& [_, hook] : pre)
    if (TensorList replaced = hook(*this, inputs); !replaced.empty()) {
      check(replaced, inputs, "pre-hook");
      inputs = std::move(replaced);
    }
  TensorList outputs = forward(inputs);
  for (const auto& [_, hook] : post)
    if (TensorList replaced = hook(*this, inputs, outputs); !replaced.empty()) {
      check(replaced, outputs, "hook");
      outputs = std::move(replaced);
    }
  return outputs;
}

std::string Module::str() const {
  const std::string head = fmt::format("{}({}", name(), extra_repr());
  if (children_.empty()) return head + ")";
  std::string out = head + "\n";
  for (const auto& [name, child] : children_) {
    std::string text = child->str();
    for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += 3)
      text.replace(at, 1, "\n  ");
    out += fmt::format("  ({}): {}\n", name, text);
  }
  return out + ")";
}

}  // namespace lt::nn
