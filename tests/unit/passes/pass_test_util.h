// Helpers shared by the pass tests: graphs from IR text, op counts, and the three checks every
// pass ships (it changes the graph or not, the result verifies, a second run changes nothing).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/parser.h"

namespace lt::passes::testing {

/// Parses and verifies: a test graph must be well formed before a pass sees it.
inline ir::Graph parse_ok(std::string_view text) {
  ir::Graph g = ir::parse(text);
  ir::verify(g);
  return g;
}

inline int count_ops(const ir::Graph& g, ir::Op op) {
  return static_cast<int>(
      std::count_if(g.nodes().begin(), g.nodes().end(), [&](const ir::Node& n) { return n.op == op; }));
}

/// The node that defines result `i` (a test bug if it is a parameter).
inline const ir::Node& result_node(const ir::Graph& g, int i = 0) {
  const ir::Value v = g.results()[i];
  EXPECT_FALSE(v.is_param()) << "result " << i << " is a parameter";
  return g.node(v.is_param() ? 0 : v.def);
}

/// The value of the `full` that defines result `i`.
inline double full_value(const ir::Graph& g, int i = 0) {
  const ir::Node& n = result_node(g, i);
  EXPECT_EQ(n.op, ir::Op::Full) << ir::print(g);
  return n.op == ir::Op::Full ? std::get<ir::FullAttrs>(n.attrs).value : -12345.0;
}

/// The types of g's results, in order ("f32[2,32]", ...): what a layout or precision pass keeps.
inline std::vector<std::string> result_types(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Value v : g.results()) out.push_back(type_str(g.type(v)));
  return out;
}

/// Runs `pass` and checks what every pass promises: it returns `changed`, the graph still
/// verifies (and round-trips through text), an unchanged graph is untouched, and a second run
/// returns false and changes nothing (idempotence). Returns the printed result.
template <class Pass>
std::string run_checked(Pass pass, ir::Graph& g, bool changed) {
  const std::string before = ir::print(g);
  EXPECT_EQ(pass(g), changed) << before;
  EXPECT_NO_THROW(ir::verify(g)) << ir::print(g);
  const std::string after = ir::print(g);
  if (!changed) {
    EXPECT_EQ(after, before);
  }
  EXPECT_FALSE(pass(g)) << "not idempotent:\n" << after;
  EXPECT_EQ(ir::print(g), after);
  EXPECT_EQ(ir::print(ir::parse(after)), after);
  return after;
}

}  // namespace lt::passes::testing
