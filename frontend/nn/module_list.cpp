// ModuleList and ModuleDict.
#include "lt/nn/module_list.h"

#include <fmt/format.h>

namespace lt::nn {

ModuleList& ModuleList::push_back(std::shared_ptr<Module> module) {
  if (!module) throw Error(fmt::format("ModuleList::push_back: module {} is null", items_.size()));
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
  return *this;
}

ModuleList& ModuleList::extend(const Items& modules) {
  // A copy first: `list.extend(list)` appends the list's modules once.
  const Items add = modules;
  for (const auto& m : add) push_back(m);
  return *this;
}

const std::shared_ptr<Module>& ModuleList::operator[](size_t i) const {
  if (i >= items_.size())
    throw Error(fmt::format("ModuleList: index {} is out of range for {} modules", i,
                            items_.size()));
  return items_[i];
}

void ModuleList::throw_wrong_type(size_t i) const {
  throw Error(fmt::format("ModuleList::at: module {} is a {}, not the type asked for", i,
                          items_[i]->name()));
}

ModuleDict& ModuleDict::insert(const std::string& key, std::shared_ptr<Module> module) {
  if (contains(key)) {
    set_child(key, std::move(module));
  } else {
    register_module(key, std::move(module));
  }
  return *this;
}

ModuleDict& ModuleDict::update(const NamedModules& items) {
  for (const auto& [key, module] : items) insert(key, module);
  return *this;
}

bool ModuleDict::contains(const std::string& key) const {
  for (const auto& [k, _] : child_entries())
    if (k == key) return true;
  return false;
}

const std::shared_ptr<Module>& ModuleDict::operator[](const std::string& key) const {
  for (const auto& [k, m] : child_entries())
    if (k == key) return m;
  throw Error(fmt::format("ModuleDict: no module under key '{}'", key));
}

std::vector<std::string> ModuleDict::keys() const {
  std::vector<std::string> out;
  for (const auto& [k, _] : child_entries()) out.push_back(k);
  return out;
}

void ModuleDict::throw_wrong_type(const std::string& key) const {
  throw Error(fmt::format("ModuleDict::at: module '{}' is a {}, not the type asked for", key,
                          (*this)[key]->name()));
}

}  // namespace lt::nn
