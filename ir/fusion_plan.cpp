// Fusion plan checks and text form. verify_fusion_plan recomputes every group's inputs and outputs
// on its own (it shares no code with passes/fuse), so a fuser bug is caught here, naming the
// kernel, rather than as wrong numbers from the emitter.
#include "ir/fusion_plan.h"

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "ir/error.h"

namespace lt::ir {
namespace {

bool loop_fusible(Op op) { return as_elementwise(op).has_value() || op == Op::Expand; }

[[noreturn]] void fail(const std::string& what) {
  throw InternalError("invalid fusion plan: " + what);
}

std::string value_list(const Graph& g, std::span<const Value> vs) {
  if (vs.empty()) return "-";
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + value_name(g, vs[i]);
  return s;
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

// Loop kernels: elementwise/expand nodes of one output each, all of the iteration shape; every
// input broadcasts to it (the emitter reads it with stride 0 along broadcast dims).
void check_loop(const Graph& g, const FusionGroup& grp, size_t k) {
  const std::string head = fmt::format("loop kernel {} ({})", k, shape_str(grp.shape));
  for (int id : grp.nodes) {
    const Node& n = g.node(id);
    if (!loop_fusible(n.op))
      fail(fmt::format("{} holds {}, which is neither elementwise nor expand", head,
                       print_node(g, id)));
    if (n.types.size() != 1 || n.types[0].shape != grp.shape)
      fail(fmt::format("{} holds {}, whose shape is not the iteration shape", head,
                       print_node(g, id)));
  }
  for (Value v : grp.inputs) {
    Shape out;
    const Shape& s = g.type(v).shape;
    if (!broadcast_shapes(s, grp.shape, &out) || out != grp.shape)
      fail(fmt::format("{} reads {} of shape {}, which does not broadcast to the iteration shape",
                       head, value_name(g, v), shape_str(s)));
  }
}

}  // namespace

void fill_group_io(const Graph& g, std::span<const int> kernel, std::vector<FusionGroup>& groups) {
  const ValueIndex index(g);
  std::vector<bool> escapes(index.size(), false);  // read by another kernel or returned
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) escapes[index(v)] = true;
  for (Value v : g.results()) escapes[index(v)] = true;

  std::vector<int> seen(index.size(), -1);  // last kernel that listed the value as an input
  for (size_t k = 0; k < groups.size(); ++k) {
    FusionGroup& grp = groups[k];
    grp.inputs.clear();
    grp.outputs.clear();
    for (int id : grp.nodes) {
      for (Value v : g.node(id).inputs) {
        if (!v.is_param() && kernel[v.def] == static_cast<int>(k)) continue;
        if (std::exchange(seen[index(v)], static_cast<int>(k)) != static_cast<int>(k))
          grp.inputs.push_back(v);
      }
    }
    for (int id : grp.nodes)
      for (int i = 0; i < g.num_outputs(id); ++i)
        if (escapes[index(Value::node(id, i))]) grp.outputs.push_back(Value::node(id, i));
  }
}

namespace {

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

}  // namespace

void verify_fusion_plan(const Graph& g, const FusionPlan& plan) {
  const std::vector<int> kernel = kernel_of_nodes(g, plan);
  check_order(g, plan, kernel);
  for (size_t k = 0; k < plan.groups.size(); ++k)
    if (plan.groups[k].kind == KernelKind::Loop) check_loop(g, plan.groups[k], k);
  check_io(g, plan, kernel);
}

std::string print_fusion_plan(const Graph& g, const FusionPlan& plan) {
  const int n = static_cast<int>(g.nodes().size());
  std::string s;
  for (size_t k = 0; k < plan.groups.size(); ++k) {
    const FusionGroup& grp = plan.groups[k];
    // Robust to broken plans (it is used to report them): unknown node ids print as '?'.
    const int last = grp.nodes.empty() ? -1 : grp.nodes.back();
    const bool known = last >= 0 && last < n;
    if (grp.kind == KernelKind::Loop) {
      // The dtype shown is the first output's (else the last node's): a kernel that also writes
      // a bool mask still reads as the f32 kernel it mostly is.
      std::string_view dtype = known ? dtype_name(g.node(last).types[0].dtype) : "?";
      if (!grp.outputs.empty() && grp.outputs[0].def < n)
        dtype = dtype_name(g.type(grp.outputs[0]).dtype);
      s += fmt::format("kernel {} loop {}{}:", k, dtype, shape_str(grp.shape));
    } else {
      s += fmt::format("kernel {} library {}:", k, known ? mnemonic(g.node(last).op) : "?");
    }
    for (int id : grp.nodes) s += fmt::format(" %{}", id);
    s += fmt::format(" (in: {}; out: {})\n", value_list(g, grp.inputs), value_list(g, grp.outputs));
  }
  return s;
}

FusionPlan unfused_plan(const Graph& g) {
  FusionPlan plan;
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> kernel(n);
  for (int id = 0; id < n; ++id) {
    kernel[id] = id;
    FusionGroup& grp = plan.groups.emplace_back();
    grp.kind = KernelKind::Library;
    grp.nodes = {id};
  }
  fill_group_io(g, kernel, plan.groups);
  return plan;
}

}  // namespace lt::ir
