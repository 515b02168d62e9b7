#include "passes/graph_copy.h"

#include <utility>

namespace lt::passes {

ir::Graph empty_copy(const ir::Graph& g) {
  ir::Graph out(g.name());
  for (const ir::Param& p : g.params()) out.add_param(p.type, p.name);
  return out;
}

void replace_graph(ir::Graph& g, ir::Graph out, std::vector<ir::Value> results) {
  out.set_results(std::move(results));
  for (const ir::Donation& d : g.donations()) out.add_donation(d);
  g = std::move(out);
}

void replace_graph(ir::Graph& g, ir::Graph out, std::span<const int> new_id) {
  std::vector<ir::Value> results;
  for (ir::Value v : g.results()) results.push_back(renumbered(v, new_id));
  replace_graph(g, std::move(out), std::move(results));
}

}  // namespace lt::passes
