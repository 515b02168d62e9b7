#include "ir/dot.h"

#include <fmt/format.h>

namespace lt::ir {
namespace {

std::string id_of(Value v) { return v.is_param() ? fmt::format("p{}", v.param_index()) : fmt::format("n{}", v.def); }

std::string escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string to_dot(const Graph& g) {
  std::string s = fmt::format("digraph \"{}\" {{\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n", escape(g.name()));
  for (size_t i = 0; i < g.params().size(); ++i)
    s += fmt::format("  p{} [shape=ellipse, label=\"%{}\\n{}\"];\n", i, escape(g.params()[i].name),
                     type_str(g.params()[i].type));
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const Node& n = g.node(id);
    std::string types;
    for (const auto& t : n.types) types += (types.empty() ? "" : ", ") + type_str(t);
    std::string attrs = attrs_str(n.attrs);
    s += fmt::format("  n{} [shape=box, label=\"%{} = {}\\n{}{}\"];\n", id, id, mnemonic(n.op),
                     attrs.empty() ? "" : escape(attrs) + "\\n", types);
    for (Value v : n.inputs)
      s += fmt::format("  {} -> n{}{};\n", id_of(v), id,
                       !v.is_param() && g.num_outputs(v.def) > 1 ? fmt::format(" [label=\"#{}\"]", v.index) : "");
  }
  for (size_t i = 0; i < g.results().size(); ++i) {
    s += fmt::format("  r{} [shape=doubleoctagon, label=\"result {}\"];\n", i, i);
    s += fmt::format("  {} -> r{};\n", id_of(g.results()[i]), i);
  }
  return s + "}\n";
}

}  // namespace lt::ir
