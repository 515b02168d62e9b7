// The backward pass: order the tape's nodes reachable from the roots (reverse topological order
// by DFS), then walk them, accumulating gradients per (node, output) and into leaves' .grad (or,
// for autograd::grad, into the gradients it returns).
#include <algorithm>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "frontend/autograd/grad_node.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/autograd.h"
#include "lt/ops.h"

#include <fmt/format.h>

namespace lt {
namespace {

thread_local bool t_grad_enabled = true;

/// Every node reachable from the roots, consumers before producers (DFS post-order over all
/// roots with one visited set, reversed).
std::vector<GradNode*> topo_order(std::span<GradNode* const> roots) {
  std::vector<GradNode*> order;
  std::unordered_set<GradNode*> seen;
  for (GradNode* root : roots) {
    if (!seen.insert(root).second) continue;
    std::vector<std::pair<GradNode*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->edges.size()) {
        GradNode* next = n->edges[i++].node.get();
        if (next && seen.insert(next).second) stack.push_back({next, 0});
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

[[noreturn]] void freed(const GradNode* n) {
  throw Error(fmt::format("backward: the graph through {} (traced at {}) was freed by an earlier "
                          "backward()",
                          node_name(*n), location_str(n->loc)));
}

void accumulate(Tensor& slot, const Tensor& g) { slot = slot.defined() ? add(slot, g) : g; }

void accumulate_leaf(TensorImpl* leaf, const Tensor& g) {
  if (leaf->grad) leaf->grad = add(Tensor(leaf->grad), g).impl_ptr();
  // A recorded pass (create_graph) keeps the gradient's history, on a copy of its own.
  else leaf->grad = (grad_enabled() ? clone(g) : snapshot(g)).impl_ptr();
}

/// g through the hooks in order; each may replace it by a tensor of its shape.
Tensor run_tensor_hooks(const std::vector<std::function<Tensor(const Tensor&)>*>& hooks,
                        Tensor g) {
  for (auto* hook : hooks) {
    Tensor r = (*hook)(g);
    if (!r.defined()) continue;
    if (r.shape() != g.shape())
      throw Error(fmt::format("backward: a hook changed the gradient's shape from {} to {}",
                              type_str(g.type()), type_str(r.type())));
    g = std::move(r);
  }
  return g;
}

Tensor leaf_hooks(TensorImpl& leaf, Tensor g) {
  std::vector<std::function<Tensor(const Tensor&)>*> hooks;
  auto copy = leaf.tensor_hooks;  // a hook may remove itself
  for (auto& h : copy) hooks.push_back(&h.second);
  return run_tensor_hooks(hooks, std::move(g));
}

void run_grad_hooks(const std::shared_ptr<TensorImpl>& leaf) {
  if (!leaf->grad) return;
  // A copy: a hook may remove itself.
  const auto hooks = leaf->grad_hooks;
  for (const auto& [id, hook] : hooks) hook(leaf);
}

// The leaves with hooks that a backward pass reaches, and how many edges into each it has yet
// to walk: the last one completes the leaf's gradient.
class LeafCompletion {
 public:
  explicit LeafCompletion(std::span<GradNode* const> order) {
    for (GradNode* n : order)
      for (const GradEdge& e : n->edges)
        if (e.leaf && e.active() &&
            (!e.leaf->grad_hooks.empty() || !e.leaf->tensor_hooks.empty()))
          ++pending_[e.leaf.get()];
  }
  /// A contribution to a leaf's gradient: accumulated now, or, for a leaf with gradient hooks,
  /// held until its pass's gradient is complete.
  void add(TensorImpl* leaf, const Tensor& g) {
    if (leaf->tensor_hooks.empty() || !pending_.count(leaf)) {
      accumulate_leaf(leaf, g);
      return;
    }
    accumulate(held_[leaf], g);
  }
  // Node n's edges are walked (its gradients accumulated, or none reached it).
  void walked(const GradNode& n) {
    if (pending_.empty()) return;
    for (const GradEdge& e : n.edges) {
      if (!e.leaf || !e.active()) continue;
      auto it = pending_.find(e.leaf.get());
      if (it == pending_.end() || --it->second != 0) continue;
      auto h = held_.find(e.leaf.get());
      if (h != held_.end()) {
        accumulate_leaf(e.leaf.get(), leaf_hooks(*e.leaf, std::move(h->second)));
        held_.erase(h);
      }
      run_grad_hooks(e.leaf);
    }
  }

 private:
  std::unordered_map<TensorImpl*, int> pending_;
  std::unordered_map<TensorImpl*, Tensor> held_;
};

// A custom function's backward, its results checked: the user wrote it, so a wrong count or
// shape is the user's error, named by the function, not an internal one.
std::vector<Tensor> custom_grads(const GradNode& n, std::span<const Tensor> gout,
                                 std::span<const char> needs) {
  const CustomGrad& c = *n.custom;
  std::vector<Tensor> gin = c.backward({n.inputs, n.outputs, c.saved, gout, needs});
  if (gin.size() != n.inputs.size())
    throw Error(fmt::format("{}: backward returned {} gradients for {} inputs (function at {})",
                            c.name, gin.size(), n.inputs.size(), location_str(n.loc)));
  for (size_t i = 0; i < gin.size(); ++i)
    if (gin[i].defined() && gin[i].shape() != n.inputs[i].shape())
      throw Error(fmt::format("{}: backward returned a gradient {} for input {} of {} (function "
                              "at {})",
                              c.name, type_str(gin[i].type()), i, type_str(n.inputs[i].type()),
                              location_str(n.loc)));
  return gin;
}

/// The saved values written in place since they were saved become unreadable: a vjp that reads
/// one throws PyTorch's version-counter error (one that reads only its type does not).
void check_versions(GradNode& n) {
  const auto check = [&](RecycledVector<Tensor>& saved, const RecycledVector<SavedVersion>& at,
                         const char* what) {
    for (size_t i = 0; i < at.size() && i < saved.size(); ++i) {
      const SavedVersion& s = at[i];
      if (!s.counter || s.counter->value == s.value) continue;
      auto poisoned = make_recycled<TensorImpl>();
      poisoned->type = saved[i].type();
      poisoned->unreadable = std::make_shared<const std::string>(fmt::format(
          "backward: one of the variables needed for gradient computation has been modified by "
          "an inplace operation: [{}], which is {} {} of {} (at {}), is at version {}; expected "
          "version {} instead",
          type_str(saved[i].type()), what, i, node_name(n), location_str(n.loc), s.counter->value,
          s.value));
      saved[i] = Tensor(std::move(poisoned));
    }
  };
  check(n.inputs, n.input_versions, "input");
  check(n.outputs, n.output_versions, "output");
}

}  // namespace

int register_post_accumulate_grad_hook(const Tensor& leaf, std::function<void(const Tensor&)> hook,
                                       std::source_location loc) {
  if (!leaf.defined() || !leaf.impl()->requires_grad || leaf.impl()->grad_fn)
    throw InputError(fmt::format(
        "register_post_accumulate_grad_hook: the tensor is not a leaf that requires grad at {}",
        location_str(loc)));
  TensorImpl* t = leaf.impl();
  const int id = t->grad_hooks.empty() ? 0 : t->grad_hooks.back().first + 1;
  t->grad_hooks.emplace_back(id, [h = std::move(hook)](const std::shared_ptr<TensorImpl>& impl) {
    h(Tensor(impl));
  });
  return id;
}

void remove_post_accumulate_grad_hook(const Tensor& leaf, int id) {
  if (!leaf.defined()) return;
  auto& hooks = leaf.impl()->grad_hooks;
  std::erase_if(hooks, [&](const auto& h) { return h.first == id; });
}

namespace {
int t_next_hook_id = 0;
}

int Tensor::add_hook(std::function<Tensor(const Tensor&)> hook, const Loc& loc) const {
  if (!impl_ || !impl_->requires_grad)
    throw Error(fmt::format("register_hook: cannot register a hook on a tensor that doesn't "
                            "require gradient at {}",
                            location_str(loc)));
  const int id = t_next_hook_id++;
  if (impl_->grad_fn)
    impl_->grad_fn->output_hooks.emplace_back(impl_->output_nr, id, std::move(hook));
  else
    impl_->tensor_hooks.emplace_back(id, std::move(hook));
  return id;
}

void Tensor::remove_hook(int id) const {
  if (!impl_) return;
  std::erase_if(impl_->tensor_hooks, [&](const auto& h) { return h.first == id; });
  if (impl_->grad_fn)
    std::erase_if(impl_->grad_fn->output_hooks,
                  [&](const auto& h) { return std::get<1>(h) == id; });
}

bool grad_enabled() { return t_grad_enabled; }
NoGradGuard::NoGradGuard() : prev_(t_grad_enabled) { t_grad_enabled = false; }
NoGradGuard::~NoGradGuard() { t_grad_enabled = prev_; }
EnableGradGuard::EnableGradGuard() : prev_(t_grad_enabled) { t_grad_enabled = true; }
EnableGradGuard::~EnableGradGuard() { t_grad_enabled = prev_; }

std::vector<Tensor> vjp(ir::Op op, const VjpArgs& a) {
  using ir::OpFamily;
  switch (ir::info(op).family) {
    case OpFamily::Elementwise: return vjp_elementwise(*ir::as_elementwise(op), a);
    case OpFamily::Reduce: return vjp_reduce(*ir::as_reduce(op), a);
    case OpFamily::View: return vjp_view(*ir::as_view(op), a);
    case OpFamily::Library: return vjp_library(*ir::as_library(op), a);
    case OpFamily::Nn: return vjp_nn(*ir::as_nn(op), a);
    case OpFamily::Creation: return std::vector<Tensor>(a.in.size());
    case OpFamily::Collective: return vjp_collective(*ir::as_collective(op), a);
  }
  LT_UNREACHABLE();
}

namespace {

/// The gradients autograd::grad returns instead of accumulating into leaves' grad(): of each
/// input, a leaf (by its impl) or an intermediate (by its node and output).
struct Captured {
  std::unordered_map<TensorImpl*, std::vector<size_t>> leaves;
  std::unordered_map<GradNode*, std::vector<std::pair<int, size_t>>> outputs;
  std::vector<Tensor> grads;

  explicit Captured(std::span<const Tensor> inputs) : grads(inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      TensorImpl* t = inputs[i].impl();
      if (t->grad_fn) outputs[t->grad_fn.get()].emplace_back(t->output_nr, i);
      else leaves[t].push_back(i);
    }
  }
  /// g for the leaf, if it is an input (else nothing: autograd::grad touches no grad()).
  void leaf(TensorImpl* t, const Tensor& g) {
    auto it = leaves.find(t);
    if (it == leaves.end()) return;
    for (size_t i : it->second) accumulate(grads[i], g);
  }
  void node(GradNode* n, std::span<const Tensor> gout) {
    auto it = outputs.find(n);
    if (it == outputs.end()) return;
    for (auto [output, i] : it->second)
      if (output < static_cast<int>(gout.size()) && gout[output].defined())
        accumulate(grads[i], gout[output]);
  }
};

/// A saved value with the autograd history of the tensor it was saved from (output_nr of node),
/// so that a create_graph pass differentiates through it.
Tensor with_history(const Tensor& saved, std::shared_ptr<GradNode> node, int output_nr) {
  if (saved.impl()->unreadable) return saved;  // written in place since: reading it throws
  Tensor t = snapshot(saved);
  t.impl()->requires_grad = true;
  t.impl()->grad_fn = std::move(node);
  t.impl()->output_nr = output_nr;
  return t;
}

/// The saved inputs and outputs of n as the tensors they were saved from: an input by its edge
/// (the leaf itself, or its producer's output), an output as n's own.
std::pair<std::vector<Tensor>, std::vector<Tensor>> saved_with_history(
    GradNode& n, const std::shared_ptr<GradNode>& self) {
  std::vector<Tensor> in(n.inputs.begin(), n.inputs.end());
  std::vector<Tensor> out(n.outputs.begin(), n.outputs.end());
  for (size_t i = 0; i < in.size() && i < n.edges.size(); ++i) {
    const GradEdge& e = n.edges[i];
    if (e.leaf && !in[i].impl()->unreadable) in[i] = Tensor(e.leaf);
    else if (e.node) in[i] = with_history(in[i], e.node, e.output_nr);
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = with_history(out[i], self, static_cast<int>(i));
  return {std::move(in), std::move(out)};
}

/// One backward pass from the roots with their seeds. Without `captured` gradients accumulate
/// into the leaves' grad() (with their hooks); with it they go to the captured inputs only.
/// `create_graph` records the pass itself (its gradients have history); `retain_graph` keeps the
/// saved values for another pass.
void backward_pass(std::span<const Tensor> roots, std::span<const Tensor> seeds,
                   Captured* captured, bool create_graph, bool retain_graph) {
  std::optional<NoGradGuard> no_grad;
  std::optional<EnableGradGuard> with_grad;
  if (create_graph) with_grad.emplace();
  else no_grad.emplace();  // gradients are values, not new history
  std::unordered_map<GradNode*, std::vector<Tensor>> grads;
  std::unordered_map<GradNode*, std::shared_ptr<GradNode>> owners;  // for with_history
  std::vector<GradNode*> starts;
  for (size_t k = 0; k < roots.size(); ++k) {
    TensorImpl* r = roots[k].impl();
    if (!r->grad_fn) {  // a leaf: its gradient is the seed itself
      if (captured) {
        captured->leaf(r, seeds[k]);
      } else {
        accumulate_leaf(r, leaf_hooks(*r, seeds[k]));
        run_grad_hooks(roots[k].impl_ptr());
      }
      continue;
    }
    if (r->grad_fn->released) freed(r->grad_fn.get());
    auto& slots = grads[r->grad_fn.get()];
    slots.resize(r->grad_fn->outputs.size());
    accumulate(slots[r->output_nr], seeds[k]);
    starts.push_back(r->grad_fn.get());
    if (create_graph) owners[r->grad_fn.get()] = r->grad_fn;
  }
  const std::vector<GradNode*> order = topo_order(starts);
  std::optional<LeafCompletion> leaves;
  if (!captured) leaves.emplace(order);
  for (GradNode* n : order) {
    auto it = grads.find(n);
    if (it == grads.end()) {
      if (leaves) leaves->walked(*n);
      continue;
    }
    std::vector<Tensor> gout = std::move(it->second);
    grads.erase(it);
    if (n->released) freed(n);
    gout.resize(n->outputs.size());
    const auto hooks = n->output_hooks;  // a copy: a hook may remove itself
    for (auto [output, id, hook] : hooks) {
      (void)id;
      if (output < static_cast<int>(gout.size()) && gout[output].defined())
        gout[output] = run_tensor_hooks({&hook}, std::move(gout[output]));
    }
    if (captured) captured->node(n, gout);
    const size_t read = n->custom ? gout.size() : vjp_outputs_read(n->op, gout.size());
    for (size_t i = 0; i < read; ++i)
      if (!gout[i].defined()) gout[i] = zeros_like(n->outputs[i]);
    check_versions(*n);
    std::vector<char> needs(n->edges.size());
    for (size_t i = 0; i < needs.size(); ++i) needs[i] = n->edges[i].active();
    std::vector<Tensor> gin;
    if (n->custom) {
      // Its backward runs on the saved values without their history: a recorded pass would
      // miss every path through them, so it is refused rather than half right.
      if (create_graph)
        throw Error(fmt::format("{}: a backward with create_graph reaches this custom function "
                                "(traced at {}), whose backward cannot be differentiated again",
                                n->custom->name, location_str(n->loc)));
      gin = custom_grads(*n, gout, needs);
    } else if (create_graph) {
      const auto [in, out] = saved_with_history(*n, owners.at(n));
      gin = vjp(n->op, {n->attrs, in, out, gout, needs});
    } else {
      gin = vjp(n->op, {n->attrs, n->inputs, n->outputs, gout, needs});
    }
    LT_CHECK(gin.size() == n->edges.size(), "vjp of {} returned {} grads for {} inputs",
             node_name(*n), gin.size(), n->edges.size());
    for (size_t i = 0; i < gin.size(); ++i) {
      const GradEdge& e = n->edges[i];
      if (!e.active() || !gin[i].defined()) continue;
      LT_CHECK(gin[i].shape() == n->inputs[i].shape(), "vjp of {} input {}: grad {} for input {}",
               node_name(*n), i, type_str(gin[i].type()), type_str(n->inputs[i].type()));
      if (e.leaf) {
        if (captured) captured->leaf(e.leaf.get(), gin[i]);
        else leaves->add(e.leaf.get(), gin[i]);
      } else {
        if (e.node->released) freed(e.node.get());
        auto& slots = grads[e.node.get()];
        slots.resize(e.node->outputs.size());
        accumulate(slots[e.output_nr], gin[i]);
        if (create_graph) owners[e.node.get()] = e.node;
      }
    }
    if (leaves) leaves->walked(*n);
    if (retain_graph) continue;
    // Free the snapshots now, as PyTorch does: intermediates die (and in lazy mode stop being
    // results of the step graph).
    n->inputs.clear();
    n->outputs.clear();
    if (n->custom) {  // its name stays, for the message if a later backward() reaches it
      n->custom->saved.clear();
      n->custom->backward = nullptr;
    }
    n->released = true;
  }
}

}  // namespace

void run_backward(const Tensor& root, const Tensor& seed) {
  backward_pass({&root, 1}, {&seed, 1}, nullptr, false, false);
}

namespace autograd {

namespace {

/// The seeds of a backward pass from `outputs`: grad_outputs (cast to each output's dtype), or
/// ones for a scalar output where one is left out or undefined. `fail` throws.
template <class Fail>
std::vector<Tensor> seeds_for(const std::vector<Tensor>& outputs,
                              const std::vector<Tensor>& grad_outputs, const Fail& fail, Loc loc) {
  if (outputs.empty()) fail("grad requires at least one output");
  if (!grad_outputs.empty() && grad_outputs.size() != outputs.size())
    fail(fmt::format("grad_outputs has {} tensors for {} outputs", grad_outputs.size(),
                     outputs.size()));
  std::vector<Tensor> seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const Tensor& y = outputs[k];
    if (!y.defined() || !y.requires_grad())
      fail(fmt::format("element {} of tensors does not require grad and does not have a "
                       "grad_fn",
                       k));
    const Tensor* g = grad_outputs.empty() ? nullptr : &grad_outputs[k];
    if (g && g->defined()) {
      if (g->shape() != y.shape())
        fail(fmt::format("Mismatch in shape: grad_output[{}] has a shape of {} and output[{}] "
                         "has a shape of {}",
                         k, shape_str(g->shape()), k, shape_str(y.shape())));
      seeds.push_back(g->dtype() == y.dtype() ? *g : cast(*g, y.dtype(), loc));
    } else {
      if (y.numel() != 1) fail("grad can be implicitly created only for scalar outputs");
      seeds.push_back(ones_like(y, loc));
    }
  }
  return seeds;
}

template <class Fail>
void check_inputs(const std::vector<Tensor>& inputs, const Fail& fail) {
  for (const Tensor& x : inputs)
    if (!x.defined() || !x.requires_grad())
      fail("One of the differentiated Tensors does not require grad");
}

}  // namespace

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused, Loc loc) {
  const auto fail = [&](const std::string& what) {
    throw Error(fmt::format("autograd::grad: {} at {}", what, location_str(loc)));
  };
  const std::vector<Tensor> seeds = seeds_for(outputs, grad_outputs, fail, loc);
  check_inputs(inputs, fail);
  Captured captured(inputs);
  backward_pass(outputs, seeds, &captured, create_graph, retain_graph.value_or(create_graph));
  for (const Tensor& g : captured.grads)
    if (!g.defined() && !allow_unused)
      fail("One of the differentiated Tensors appears to not have been used in the graph. Set "
           "allow_unused=True if this is the desired behavior.");
  return std::move(captured.grads);
}

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs, Loc loc) {
  const auto fail = [&](const std::string& what) {
    throw Error(fmt::format("autograd::backward: {} at {}", what, location_str(loc)));
  };
  const std::vector<Tensor> seeds = seeds_for(tensors, grad_tensors, fail, loc);
  const bool retain = retain_graph.value_or(create_graph);
  if (inputs.empty()) return backward_pass(tensors, seeds, nullptr, create_graph, retain);
  check_inputs(inputs, fail);
  Captured captured(inputs);
  backward_pass(tensors, seeds, &captured, create_graph, retain);
  // Each tensor once, its gradient complete: then its hooks, as a pass without inputs runs them.
  std::optional<EnableGradGuard> with_grad;
  std::optional<NoGradGuard> no_grad;
  if (create_graph) with_grad.emplace();
  else no_grad.emplace();
  std::unordered_set<TensorImpl*> done;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TensorImpl* t = inputs[i].impl();
    if (!captured.grads[i].defined() || !done.insert(t).second) continue;
    if (t->grad_fn) {
      accumulate_leaf(t, captured.grads[i]);
    } else {
      accumulate_leaf(t, leaf_hooks(*t, captured.grads[i]));
      run_grad_hooks(inputs[i].impl_ptr());
    }
  }
}

}  // namespace autograd

}  // namespace lt
