// The fusion plan as text, for dumps, golden tests and the verifier's messages.
#include <fmt/format.h>

#include <string_view>

#include "ir/fusion_plan.h"
#include "ir/loop_kernel.h"

namespace lt::ir {

std::string value_list(const Graph& g, std::span<const Value> vs) {
  if (vs.empty()) return "-";
  std::string s;
  for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", " : "") + value_name(g, vs[i]);
  return s;
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
      s += fmt::format("kernel {} loop {}{}", k, dtype, shape_str(grp.shape));
      // A reducing kernel names the axes it reduces (the first reduction's).
      for (int id : grp.nodes) {
        if (id < 0 || id >= n || !as_reduce(g.node(id).op)) continue;
        s += fmt::format(" reduce{}", shape_str(reduced_axes(g, id)));
        break;
      }
      s += ":";
    } else if (grp.kind == KernelKind::Epilogue) {
      const int first = grp.nodes.front();
      const bool ok = first >= 0 && first < n;
      s += fmt::format("kernel {} {}+loop {}{}:", k, ok ? mnemonic(g.node(first).op) : "?",
                       ok ? dtype_name(g.node(first).types[0].dtype) : "?", shape_str(grp.shape));
    } else {
      s += fmt::format("kernel {} library {}:", k, known ? mnemonic(g.node(last).op) : "?");
    }
    for (int id : grp.nodes) s += fmt::format(" %{}", id);
    s += fmt::format(" (in: {}; out: {})", value_list(g, grp.inputs), value_list(g, grp.outputs));
    if (grp.awaited_before >= 0) s += fmt::format(" awaited before kernel {}", grp.awaited_before);
    s += "\n";
  }
  return s;
}

}  // namespace lt::ir
