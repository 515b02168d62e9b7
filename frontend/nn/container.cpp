// Sequential, Flatten and Functional.
#include "lt/nn/container.h"

#include "frontend/nn/layer_args.h"
#include "lt/ops.h"

namespace lt::nn {

Flatten::Flatten(int64_t start, int64_t end) : start_dim(start), end_dim(end) {}

Tensor Flatten::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) { return flatten(x, start_dim, end_dim, loc); });
}

std::string Flatten::extra_repr() const {
  return fmt::format("start_dim={}, end_dim={}", start_dim, end_dim);
}

Functional::Functional(Fn fn, std::string name) : fn_(std::move(fn)), name_(std::move(name)) {
  require(static_cast<bool>(fn_), name_, "the function is empty");
}

void Sequential::append(std::shared_ptr<Module> module, Forward forward) {
  if (!module) throw Error(fmt::format("Sequential::push_back: module {} is null", items_.size()));
  register_module(std::to_string(items_.size()), module);
  items_.push_back(std::move(module));
  forwards_.push_back(std::move(forward));
}

Sequential& Sequential::push_back(Functional::Fn fn) {
  return push_back(std::make_shared<Functional>(std::move(fn)));
}

Tensor Sequential::forward(const Tensor& x, Loc loc) {
  return with_hooks(x, [&](const Tensor& x) {
    Tensor h = x;
    for (const Forward& f : forwards_) h = f(h, loc);
    return h;
  });
}

std::shared_ptr<Module> Sequential::operator[](size_t i) const {
  if (i >= items_.size())
    throw Error(fmt::format("Sequential: index {} out of range for {} modules", i, items_.size()));
  return items_[i];
}

void Sequential::throw_wrong_type(size_t i) const {
  throw Error(fmt::format("Sequential::at: module {} is a {}, not the type asked for", i,
                          items_[i]->name()));
}

}  // namespace lt::nn
