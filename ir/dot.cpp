#include "ir/dot.h"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "ir/error.h"

namespace lt::ir {
namespace {

std::string id_of(Value v) {
  return v.is_param() ? fmt::format("p{}", v.param_index()) : fmt::format("n{}", v.def);
}

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string node_line(const Graph& g, int id, std::string_view indent) {
  const Node& n = g.node(id);
  std::string types;
  for (const auto& t : n.types) types += (types.empty() ? "" : ", ") + type_str(t);
  const std::string attrs = attrs_str(n.attrs);
  return fmt::format("{}n{} [shape=box, label=\"%{} = {}\\n{}{}\"];\n", indent, id, id,
                     mnemonic(n.op), attrs.empty() ? "" : escape(attrs) + "\\n", types);
}

// The cluster's label and colours: what kind of kernel it is, at a glance.
std::string cluster_style(const Graph& g, const FusionGroup& grp, size_t k) {
  std::string label;
  const char* fill = "#eeeeee";
  switch (grp.kind) {
    case KernelKind::Loop:
      label = fmt::format("kernel {} loop {}", k, shape_str(grp.shape));
      fill = "#dbe8f6";
      break;
    case KernelKind::Epilogue:
      label = fmt::format("kernel {} {}+loop {}", k, mnemonic(g.node(grp.nodes.front()).op),
                          shape_str(grp.shape));
      fill = "#fbe3cc";
      break;
    case KernelKind::Library:
      label = fmt::format("kernel {} library {}", k,
                          grp.nodes.empty() ? "" : mnemonic(g.node(grp.nodes.back()).op));
      break;
  }
  return fmt::format("label=\"{}\", style=\"rounded,filled\", fillcolor=\"{}\"", label, fill);
}

std::string draw(const Graph& g, const FusionPlan* plan) {
  const int n = static_cast<int>(g.nodes().size());
  std::string s = fmt::format(
      "digraph \"{}\" {{\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n",
      escape(g.name()));
  if (plan)
    s += "  graph [fontname=\"monospace\", fontsize=10, labeljust=l];\n"
         "  node [style=filled, fillcolor=white];\n";
  for (size_t i = 0; i < g.params().size(); ++i)
    s += fmt::format("  p{} [shape=ellipse, label=\"%{}\\n{}\"];\n", i, escape(g.params()[i].name),
                     type_str(g.params()[i].type));
  // Nodes inside their kernel's cluster; edges after every cluster, since an edge written inside
  // one would pull its other end (a parameter, another kernel's node) into it.
  std::vector<char> drawn(n, 0);
  if (plan) {
    for (size_t k = 0; k < plan->groups.size(); ++k) {
      const FusionGroup& grp = plan->groups[k];
      for (int id : grp.nodes)
        if (id < 0 || id >= n)
          throw InternalError(
              fmt::format("to_dot: kernel {} holds %{}, not a node of @{}", k, id, g.name()));
      if (grp.nodes.empty()) continue;
      s += fmt::format("  subgraph cluster_{} {{\n    graph [{}];\n", k, cluster_style(g, grp, k));
      for (int id : grp.nodes) {
        s += node_line(g, id, "    ");
        drawn[id] = 1;
      }
      s += "  }\n";
    }
  }
  for (int id = 0; id < n; ++id)
    if (!drawn[id]) s += node_line(g, id, "  ");
  for (int id = 0; id < n; ++id)
    for (Value v : g.node(id).inputs) {
      const bool numbered = !v.is_param() && g.num_outputs(v.def) > 1;
      s += fmt::format("  {} -> n{}{};\n", id_of(v), id,
                       numbered ? fmt::format(" [label=\"#{}\"]", v.index) : "");
    }
  for (size_t i = 0; i < g.results().size(); ++i) {
    s += fmt::format("  r{} [shape=doubleoctagon, label=\"result {}\"];\n", i, i);
    s += fmt::format("  {} -> r{};\n", id_of(g.results()[i]), i);
  }
  return s + "}\n";
}

}  // namespace

std::string to_dot(const Graph& g) { return draw(g, nullptr); }

std::string to_dot(const Graph& g, const FusionPlan& plan) { return draw(g, &plan); }

}  // namespace lt::ir
