// ModuleList and ModuleDict: modules held and registered without a forward of their own, for a
// model whose forward picks its layers (a loop over blocks, heads by task name).
#pragma once
#include <concepts>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lt/nn/module.h"

namespace lt::nn {

/// Modules in a list, registered as "0", "1", ... (state_dict keys "layers.0.weight", as
/// PyTorch's nn.ModuleList):
///   auto blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
///   for (int i = 0; i < 4; ++i) blocks->push_back(std::make_shared<nn::Linear>(64, 64));
///   for (const auto& b : *blocks) h = std::static_pointer_cast<nn::Linear>(b)->forward(h);
class ModuleList : public Module {
 public:
  using Items = std::vector<std::shared_ptr<Module>>;

  ModuleList() = default;
  template <std::derived_from<Module>... M>
  explicit ModuleList(std::shared_ptr<M>... modules) {
    (push_back(std::move(modules)), ...);
  }

  /// Appends a module under the next index.
  ModuleList& push_back(std::shared_ptr<Module> module);
  ModuleList& append(std::shared_ptr<Module> module) { return push_back(std::move(module)); }
  /// Appends every module of `modules` (or of another list: the same modules, shared).
  ModuleList& extend(const Items& modules);
  ModuleList& extend(const ModuleList& other) { return extend(other.items_); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// The i-th module; out of range throws.
  const std::shared_ptr<Module>& operator[](size_t i) const;
  /// The i-th module as an M; out of range or another type throws.
  template <class M>
  std::shared_ptr<M> at(size_t i) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!m) throw_wrong_type(i);
    return m;
  }
  Items::const_iterator begin() const { return items_.begin(); }
  Items::const_iterator end() const { return items_.end(); }

 private:
  [[noreturn]] void throw_wrong_type(size_t i) const;
  Items items_;
};

/// Modules by string key in insertion order, each registered under its key (state_dict keys
/// "heads.cls.weight", as PyTorch's nn.ModuleDict). A key follows the rules of a module name:
/// non-empty, no '.'.
class ModuleDict : public Module {
 public:
  ModuleDict() = default;
  /// ModuleDict({{"cls", std::make_shared<nn::Linear>(64, 10)}, {"box", ...}}).
  explicit ModuleDict(const NamedModules& items) { update(items); }

  /// Adds `module` under `key`, or puts it in the place of the module already there (the key
  /// keeps its position), as PyTorch's `dict[key] = module`.
  ModuleDict& insert(const std::string& key, std::shared_ptr<Module> module);
  /// insert for every pair, in order.
  ModuleDict& update(const NamedModules& items);

  size_t size() const { return child_entries().size(); }
  bool empty() const { return child_entries().empty(); }
  bool contains(const std::string& key) const;
  /// The module under `key`; a missing key throws.
  const std::shared_ptr<Module>& operator[](const std::string& key) const;
  template <class M>
  std::shared_ptr<M> at(const std::string& key) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[key]);
    if (!m) throw_wrong_type(key);
    return m;
  }
  std::vector<std::string> keys() const;
  std::vector<std::shared_ptr<Module>> values() const { return children(); }
  /// (key, module) pairs in insertion order.
  const NamedModules& items() const { return child_entries(); }
  NamedModules::const_iterator begin() const { return child_entries().begin(); }
  NamedModules::const_iterator end() const { return child_entries().end(); }

 private:
  [[noreturn]] void throw_wrong_type(const std::string& key) const;
};

}  // namespace lt::nn
