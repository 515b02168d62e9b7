#include "frontend/lazy/recompile_report.h"

#include <fmt/format.h>

namespace lt::lazy {
namespace {

bool same_node(const ir::Node& a, const ir::Node& b) {
  return a.op == b.op && a.attrs == b.attrs && a.inputs == b.inputs && a.types == b.types;
}

/// Length of the common prefix: parameters count first, then nodes.
size_t common_prefix(const ir::Graph& a, const ir::Graph& b) {
  size_t k = 0;
  const size_t np = std::min(a.params().size(), b.params().size());
  while (k < np && a.params()[k].type == b.params()[k].type) ++k;
  if (k < a.params().size() || a.params().size() != b.params().size()) return k;
  size_t j = 0;
  const size_t nn = std::min(a.nodes().size(), b.nodes().size());
  while (j < nn && same_node(a.nodes()[j], b.nodes()[j])) ++j;
  return k + j;
}

/// The first node that reads parameter p (where the user's code met the changed input).
int first_reader(const ir::Graph& g, int p) {
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (ir::Value v : g.node(id).inputs)
      if (v.is_param() && v.param_index() == p) return id;
  return -1;
}

std::string with_loc(const ir::Graph& g, int id) {
  const ir::Node& n = g.node(id);
  return n.loc.empty() ? ir::print_node(g, id)
                       : fmt::format("{}  (traced at {})", ir::print_node(g, id), n.loc);
}

}  // namespace

std::string explain_difference(const ir::Graph& g, const std::vector<const ir::Graph*>& cached) {
  const ir::Graph* best = nullptr;
  size_t best_len = 0;
  for (const ir::Graph* c : cached) {
    const size_t len = common_prefix(g, *c);
    if (!best || len > best_len) {
      best = c;
      best_len = len;
    }
  }
  if (!best) return "";
  const size_t np = g.params().size();
  if (best_len < np || np != best->params().size()) {
    const size_t p = best_len;
    const std::string now = p < np ? type_str(g.params()[p].type) : std::string("(none)");
    const std::string was =
        p < best->params().size() ? type_str(best->params()[p].type) : std::string("(none)");
    std::string s = fmt::format("parameter {} is {}, cached graph had {}", p, now, was);
    if (p < np)
      if (int r = first_reader(g, static_cast<int>(p)); r >= 0)
        s += "; first use: " + with_loc(g, r);
    return s;
  }
  const size_t j = best_len - np;
  if (j >= g.nodes().size()) {
    return fmt::format("same {} nodes as a cached graph; the results differ", g.nodes().size());
  }
  std::string s = "first differing node: " + with_loc(g, static_cast<int>(j));
  if (j < best->nodes().size())
    s += "; cached graph had: " + ir::print_node(*best, static_cast<int>(j));
  return s;
}

}  // namespace lt::lazy
