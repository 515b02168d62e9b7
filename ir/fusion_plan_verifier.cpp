// verify_fusion_plan recomputes every group's inputs, outputs and node roles on its own (it shares
// no code with passes/fuse), so a fuser bug is caught here, naming the kernel, rather than as
// wrong numbers from the emitter. It checks the contract (ir/loop_kernel.h) and the backend's
// rules (ir/kernel_rules.h) but for its cost rule (folds_view), which no plan depends on.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/kernel_rules.h"
#include "ir/loop_kernel.h"
#include "ir/read_map.h"

namespace lt::ir {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw InternalError("invalid fusion plan: " + what);
}

// Which kernel holds each node; checks "every node in exactly one group" and group sizes.
std::vector<int> kernel_of_nodes(const Graph& g, const FusionPlan& plan) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> kernel(n, -1);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const FusionGroup& grp = plan.groups[k];
    if (grp.nodes.empty()) fail(fmt::format("kernel {} has no nodes", k));
    if (grp.kind == KernelKind::Library && grp.nodes.size() != 1)
      fail(fmt::format("library kernel {} holds {} nodes; a library kernel runs exactly one", k,
                       grp.nodes.size()));
    if (grp.kind == KernelKind::Epilogue && grp.nodes.size() < 2)
      fail(fmt::format("epilogue kernel {} holds no loop after its library node", k));
    for (int id : grp.nodes) {
      if (id < 0 || id >= n)
        fail(fmt::format("kernel {} names node %{}, which does not exist", k, id));
      if (kernel[id] >= 0) fail(fmt::format("node %{} is in kernels {} and {}", id, kernel[id], k));
      kernel[id] = static_cast<int>(k);
    }
  }
  for (int id = 0; id < n; ++id)
    if (kernel[id] < 0) fail(fmt::format("node {} is in no kernel", print_node(g, id)));
  return kernel;
}

// Each operand is a parameter, an earlier node of the same kernel, or a node of an earlier kernel.
void check_order(const Graph& g, const FusionPlan& plan, std::span<const int> kernel) {
  std::vector<int> pos(g.nodes().size(), 0);
  for (const FusionGroup& grp : plan.groups)
    for (size_t i = 0; i < grp.nodes.size(); ++i) pos[grp.nodes[i]] = static_cast<int>(i);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    for (int id : plan.groups[k].nodes) {
      for (Value v : g.node(id).inputs) {
        if (v.is_param()) continue;
        const int from = kernel[v.def];
        if (from > static_cast<int>(k))
          fail(fmt::format("kernel {} reads {} from kernel {}, which runs later", k,
                           value_name(g, v), from));
        if (from == static_cast<int>(k) && pos[v.def] > pos[id])
          fail(fmt::format("kernel {} lists %{} before its operand %{}", k, id, v.def));
      }
    }
  }
}

// The loop kernel contract (docs/IR.md): see LoopRole. Compute nodes have the iteration shape
// and are ones the backend computes; reductions reduce it, all over the same axes, are ones the
// backend ends a loop in, and only aliases read their results; views either fold (every operand
// from outside or folded) or alias a computed value (reshape); what a node reads from outside or
// through folded views must have an index map into the iteration space; a folded view is written
// only at the iteration shape.
class LoopChecker {
 public:
  LoopChecker(const Graph& g, const FusionGroup& grp, size_t k, std::span<const int> kernel,
              const KernelRules& rules)
      : g_(g),
        grp_(grp),
        k_(static_cast<int>(k)),
        kernel_(kernel),
        rules_(rules),
        head_(fmt::format("loop kernel {} ({})", k, shape_str(grp.shape))) {}

  void run() {
    const std::vector<LoopRole> roles = loop_roles(g_, grp_.nodes);
    for (size_t i = 0; i < grp_.nodes.size(); ++i) role_[grp_.nodes[i]] = roles[i];
    for (size_t i = 0; i < grp_.nodes.size(); ++i) check_node(grp_.nodes[i], roles[i]);
    for (Value v : grp_.outputs) check_output(v);
  }

 private:
  bool outside(Value v) const { return v.is_param() || kernel_[v.def] != k_; }
  std::optional<LoopRole> role_of(Value v) const {
    if (outside(v)) return std::nullopt;
    const auto it = role_.find(v.def);
    return it == role_.end() ? std::nullopt : std::optional(it->second);
  }

  void check_node(int id, LoopRole role) {
    const Node& n = g_.node(id);
    // A reduction the backend's loops do not end in is no more a loop's than a library node.
    if (role == LoopRole::Reduction && !rules_.loop_reduction(g_, id)) role = LoopRole::Invalid;
    switch (role) {
      case LoopRole::Invalid:
        fail(fmt::format("{} holds {}, which is neither elementwise, a view it can fold or alias, "
                         "nor a reduction it can end in",
                         head_, print_node(g_, id)));
      case LoopRole::Compute:
        if (n.types.size() != 1 || n.types[0].shape != grp_.shape)
          fail(fmt::format("{} holds {}, whose shape is not the iteration shape", head_,
                           print_node(g_, id)));
        // An expand of a computed value (the other Compute nodes) moves nothing to compute.
        if (info(n.op).loop == LoopForm::Elementwise && !rules_.computes(g_, id))
          fail(fmt::format("{} holds {}, which the {} backend's loop kernels do not compute", head_,
                           print_node(g_, id), rules_.backend));
        for (Value v : n.inputs) check_read(id, v);
        return;
      case LoopRole::Reduction: {
        if (g_.type(n.inputs[0]).shape != grp_.shape)
          fail(fmt::format("{} holds {}, which does not reduce the iteration shape", head_,
                           print_node(g_, id)));
        const Ints axes = reduced_axes(g_, id);
        if (axes_ && *axes_ != axes)
          fail(fmt::format("{} holds {}, which reduces other axes than the kernel's other "
                           "reductions",
                           head_, print_node(g_, id)));
        axes_ = axes;
        check_read(id, n.inputs[0]);
        return;
      }
      case LoopRole::FoldedView:
      case LoopRole::Alias: return;  // checked where read or written
    }
  }

  // A compute node or reduction reads v: a computed value of the iteration shape, or through an
  // index map.
  void check_read(int id, Value v) {
    const auto role = role_of(v);
    if (role == LoopRole::Compute) return;  // of the iteration shape: checked at its node
    if (role == LoopRole::Alias || role == LoopRole::Reduction)
      fail(fmt::format("{} holds %{}, which reads {}, a reduction result or alias the kernel "
                       "does not have per element",
                       head_, id, value_name(g_, v)));
    if (!read_map(g_, v, grp_.shape, [&](Value x) { return outside(x); }))
      fail(fmt::format("{} holds %{}, which reads {} of shape {} through views that do not fold "
                       "into the iteration space",
                       head_, id, value_name(g_, v), shape_str(g_.type(v).shape)));
  }

  void check_output(Value v) {
    if (role_of(v) != LoopRole::FoldedView) return;
    if (g_.type(v).shape != grp_.shape ||
        !read_map(g_, v, grp_.shape, [&](Value x) { return outside(x); }))
      fail(fmt::format("{} writes {}, a view it folds into index maps, whose shape is not the "
                       "iteration shape",
                       head_, value_name(g_, v)));
  }

  const Graph& g_;
  const FusionGroup& grp_;
  int k_;
  std::span<const int> kernel_;
  const KernelRules& rules_;
  std::string head_;
  std::map<int, LoopRole> role_;
  std::optional<Ints> axes_;
};

// The library node takes an epilogue and makes the group's shape; the loop after it follows the
// loop kernel contract with the library output as an input from outside, which it reads without
// reductions and only element by element (a block of it is all the loop may see at a time).
void check_epilogue(const Graph& g, const FusionGroup& grp, size_t k, std::span<const int> kernel,
                    const KernelRules& rules) {
  const int lib = grp.nodes.front();
  const std::string head = fmt::format("epilogue kernel {} ({})", k, shape_str(grp.shape));
  if (!rules.takes_epilogue(g, lib))
    fail(fmt::format("{} starts with {}, which takes no epilogue", head, print_node(g, lib)));
  if (g.node(lib).types[0].shape != grp.shape)
    fail(fmt::format("{}: its library node's output is {}, not the kernel's shape", head,
                     shape_str(g.node(lib).types[0].shape)));
  const FusionGroup loop = epilogue_loop(g, grp);
  if (std::find(loop.inputs.begin(), loop.inputs.end(), Value::node(lib)) == loop.inputs.end())
    fail(fmt::format("{}: its loop does not read the library output", head));
  std::vector<int> loop_kernel(kernel.begin(), kernel.end());
  loop_kernel[lib] = -1;  // outside the loop
  LoopChecker(g, loop, k, loop_kernel, rules).run();
  const std::vector<LoopRole> roles = loop_roles(g, loop.nodes);
  for (size_t i = 0; i < loop.nodes.size(); ++i) {
    const Node& n = g.node(loop.nodes[i]);
    if (roles[i] == LoopRole::Reduction)
      fail(fmt::format("{} holds {}, a reduction", head, print_node(g, loop.nodes[i])));
    const bool reads_lib = std::any_of(n.inputs.begin(), n.inputs.end(),
                                       [&](Value v) { return !v.is_param() && v.def == lib; });
    if (reads_lib && roles[i] != LoopRole::Compute)
      fail(fmt::format("{} holds {}, which reads the library output other than element by element",
                       head, print_node(g, loop.nodes[i])));
  }
}

void check_io(const Graph& g, const FusionPlan& plan, std::span<const int> kernel) {
  std::vector<FusionGroup> want = plan.groups;
  fill_group_io(g, kernel, want);
  for (size_t k = 0; k < want.size(); ++k) {
    const FusionGroup& have = plan.groups[k];
    if (have.inputs != want[k].inputs)
      fail(fmt::format("kernel {} inputs are ({}) but should be ({})", k,
                       value_list(g, have.inputs), value_list(g, want[k].inputs)));
    if (have.outputs != want[k].outputs)
      fail(fmt::format("kernel {} outputs are ({}) but should be ({})", k,
                       value_list(g, have.outputs), value_list(g, want[k].outputs)));
  }
}

// An asynchronous collective is a library group of one collective node, awaited after it starts
// and no later than the first group that reads its result.
void check_awaits(const Graph& g, const FusionPlan& plan) {
  const int n = static_cast<int>(plan.groups.size());
  for (int k = 0; k < n; ++k) {
    const FusionGroup& grp = plan.groups[k];
    if (grp.awaited_before < 0) continue;
    const std::string head = fmt::format("kernel {}, awaited before kernel {},", k,
                                         grp.awaited_before);
    if (grp.kind != KernelKind::Library || grp.nodes.size() != 1 ||
        !as_collective(g.node(grp.nodes[0]).op))
      fail(fmt::format("{} is not one collective", head));
    if (grp.awaited_before <= k || grp.awaited_before > n)
      fail(fmt::format("{} is awaited outside ({}, {}]", head, k, n));
    for (int j = k + 1; j < grp.awaited_before; ++j)
      for (Value v : plan.groups[j].inputs)
        if (v == Value::node(grp.nodes[0]))
          fail(fmt::format("{} is read by kernel {} before it is awaited", head, j));
  }
}

}  // namespace

void verify_fusion_plan(const Graph& g, const FusionPlan& plan, const KernelRules& rules) {
  const std::vector<int> kernel = kernel_of_nodes(g, plan);
  check_order(g, plan, kernel);
  check_io(g, plan, kernel);
  check_awaits(g, plan);
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    if (plan.groups[k].kind == KernelKind::Loop)
      LoopChecker(g, plan.groups[k], k, kernel, rules).run();
    if (plan.groups[k].kind == KernelKind::Epilogue)
      check_epilogue(g, plan.groups[k], k, kernel, rules);
  }
}

}  // namespace lt::ir
