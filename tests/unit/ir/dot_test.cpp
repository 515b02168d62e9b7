#include "ir/dot.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/parser.h"

namespace lt::ir {
namespace {

FusionGroup group(KernelKind kind, std::vector<int> nodes, Shape shape) {
  FusionGroup grp;
  grp.kind = kind;
  grp.nodes = std::move(nodes);
  grp.shape = std::move(shape);
  return grp;
}

// A hand-made plan (the golden test tests/ir/dot/clusters.ir draws a real one): a node that no
// group holds is drawn outside every cluster, and an empty group draws no cluster.
TEST(Dot, NodesOutsideThePlanAreDrawnOutsideClusters) {
  const Graph g = parse(R"(
    graph @f(%a: f32[4]) {
      %0 = exp(%a) : f32[4]
      %1 = neg(%0) : f32[4]
      return %1
    })");
  FusionPlan plan;
  plan.groups.push_back(group(KernelKind::Library, {}, {}));
  plan.groups.push_back(group(KernelKind::Loop, {1}, {4}));
  EXPECT_EQ(to_dot(g, plan),
            "digraph \"f\" {\n"
            "  rankdir=TB;\n"
            "  node [fontname=\"monospace\", fontsize=10];\n"
            "  graph [fontname=\"monospace\", fontsize=10, labeljust=l];\n"
            "  node [style=filled, fillcolor=white];\n"
            "  p0 [shape=ellipse, label=\"%a\\nf32[4]\"];\n"
            "  subgraph cluster_1 {\n"
            "    graph [label=\"kernel 1 loop [4]\", style=\"rounded,filled\", "
            "fillcolor=\"#dbe8f6\"];\n"
            "    n1 [shape=box, label=\"%1 = neg\\nf32[4]\"];\n"
            "  }\n"
            "  n0 [shape=box, label=\"%0 = exp\\nf32[4]\"];\n"
            "  p0 -> n0;\n"
            "  n0 -> n1;\n"
            "  r0 [shape=doubleoctagon, label=\"result 0\"];\n"
            "  n1 -> r0;\n"
            "}\n");
}

TEST(Dot, NodeIdOutsideTheGraphIsAnInternalError) {
  const Graph g = parse("graph @f(%a: f32[4]) {\n  %0 = exp(%a) : f32[4]\n  return %0\n}");
  FusionPlan plan;
  plan.groups.push_back(group(KernelKind::Loop, {0, 3}, {4}));
  try {
    to_dot(g, plan);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(), "to_dot: kernel 0 holds %3, not a node of @f");
  }
}

}  // namespace
}  // namespace lt::ir
