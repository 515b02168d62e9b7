// The IR text form (docs/IR.md):
//   graph @step(%w: f32[784,512], %x: f32[128,784]) donate(%w: 1) {
//     %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[128,512]
//     %1:3 = batch_norm(%0, %g, %b) {eps=1e-05} : (f32[..], f32[..], f32[..])
//     return %0, %1#2
//   }
#include <fmt/format.h>

#include "ir/graph.h"

namespace lt::ir {

std::string value_name(const Graph& g, Value v) {
  if (v.is_param()) return "%" + g.params()[v.param_index()].name;
  if (g.num_outputs(v.def) == 1) return fmt::format("%{}", v.def);
  return fmt::format("%{}#{}", v.def, v.index);
}

std::string print_node(const Graph& g, int id) {
  const Node& n = g.node(id);
  std::string s = fmt::format("%{}", id);
  if (n.types.size() != 1) s += fmt::format(":{}", n.types.size());
  s += fmt::format(" = {}(", mnemonic(n.op));
  for (size_t i = 0; i < n.inputs.size(); ++i) s += (i ? ", " : "") + value_name(g, n.inputs[i]);
  s += ")";
  if (std::string a = attrs_str(n.attrs); !a.empty()) s += " " + a;
  s += " : ";
  if (n.types.size() == 1) return s + type_str(n.types[0]);
  s += "(";
  for (size_t i = 0; i < n.types.size(); ++i) s += (i ? ", " : "") + type_str(n.types[i]);
  return s + ")";
}

std::string print(const Graph& g) {
  std::string s = fmt::format("graph @{}(", g.name());
  for (size_t i = 0; i < g.params().size(); ++i)
    s += fmt::format("{}%{}: {}", i ? ", " : "", g.params()[i].name, type_str(g.params()[i].type));
  s += ")";
  if (!g.donations().empty()) {
    s += " donate(";
    for (size_t i = 0; i < g.donations().size(); ++i)
      s += fmt::format("{}%{}: {}", i ? ", " : "", g.params()[g.donations()[i].param].name,
                       g.donations()[i].result);
    s += ")";
  }
  s += " {\n";
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    s += "  " + print_node(g, id) + "\n";
  s += "  return";
  for (size_t i = 0; i < g.results().size(); ++i)
    s += (i ? ", " : " ") + value_name(g, g.results()[i]);
  return s + "\n}\n";
}

}  // namespace lt::ir
