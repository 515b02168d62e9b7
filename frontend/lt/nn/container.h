// Sequential, and the glue between its layers: Identity, Flatten and Functional (any Tensor ->
// Tensor function as a module).
#pragma once
#include <concepts>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lt/nn/module.h"

namespace lt::nn {

/// A module whose forward takes and returns one Tensor: every layer of lt::nn, and what a
/// Sequential holds.
template <class M>
concept UnaryModule = std::derived_from<M, Module> && requires(M& m, const Tensor& x) {
  { m.forward(x) } -> std::convertible_to<Tensor>;
};

/// Returns its input (the same tensor): a placeholder layer, as PyTorch's nn.Identity.
class Identity : public Module {
 public:
  Tensor forward(const Tensor& x) {
    return with_hooks(x, [](const Tensor& x) { return x; });
  }
};

/// Merges dims start_dim..end_dim into one (default: all but the batch dim).
class Flatten : public Module {
 public:
  explicit Flatten(int64_t start_dim = 1, int64_t end_dim = -1);
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  std::string extra_repr() const override;

  const int64_t start_dim, end_dim;
};

/// A Tensor -> Tensor function as a module without parameters (a reshape in a Sequential).
class Functional : public Module {
 public:
  using Fn = std::function<Tensor(const Tensor&)>;
  explicit Functional(Fn fn, std::string name = "Functional");
  Tensor forward(const Tensor& x) { return with_hooks(x, fn_); }
  std::string name() const override { return name_; }

 private:
  Fn fn_;
  std::string name_;
};

/// Modules applied in order, registered as "0", "1", ...:
///   auto net = std::make_shared<nn::Sequential>(std::make_shared<nn::Linear>(784, 128),
///                                               std::make_shared<nn::ReLU>());
class Sequential : public Module {
 public:
  Sequential() = default;
  template <UnaryModule... M>
  explicit Sequential(std::shared_ptr<M>... modules) {
    (push_back(std::move(modules)), ...);
  }

  template <UnaryModule M>
  Sequential& push_back(std::shared_ptr<M> module) {
    M* raw = module.get();
    append(std::move(module), [raw](const Tensor& x, const Loc& loc) {
      if constexpr (requires { raw->forward(x, loc); })
        return Tensor(raw->forward(x, loc));
      else
        return Tensor(raw->forward(x));
    });
    return *this;
  }
  /// Appends a Functional.
  Sequential& push_back(Functional::Fn fn);

  /// The input through every module in order (an empty Sequential returns it).
  Tensor forward(const Tensor& x, Loc loc = Loc::current());
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  /// The i-th module; out of range throws.
  std::shared_ptr<Module> operator[](size_t i) const;
  /// The i-th module as an M; out of range or another type throws.
  template <class M>
  std::shared_ptr<M> at(size_t i) const {
    auto m = std::dynamic_pointer_cast<M>((*this)[i]);
    if (!m) throw_wrong_type(i);
    return m;
  }

 private:
  using Forward = std::function<Tensor(const Tensor&, const Loc&)>;
  void append(std::shared_ptr<Module> module, Forward forward);
  [[noreturn]] void throw_wrong_type(size_t i) const;

  std::vector<std::shared_ptr<Module>> items_;
  std::vector<Forward> forwards_;
};

}  // namespace lt::nn
