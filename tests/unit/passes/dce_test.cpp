#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ir/parser.h"
#include "passes/dce.h"

namespace lt::passes {
namespace {

TEST(Dce, DropsDeadNodesAndRenumbers) {
  ir::Graph g = ir::parse(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%x) : f32[4]
      %2 = add(%1, %x) : f32[4]
      return %2
    })");
  EXPECT_TRUE(dce(g));
  EXPECT_EQ(ir::print(g),
            "graph @f(%x: f32[4]) {\n  %0 = neg(%x) : f32[4]\n  %1 = add(%0, %x) : f32[4]\n  return %1\n}\n");
  EXPECT_FALSE(dce(g));  // idempotent
  EXPECT_NO_THROW(ir::verify(g));
}

TEST(Dce, KeepsEverythingLive) {
  ir::Graph g = ir::parse(R"(
    graph @f(%x: f32[4]) {
      %0 = exp(%x) : f32[4]
      return %0, %x
    })");
  const std::string before = ir::print(g);
  EXPECT_FALSE(dce(g));
  EXPECT_EQ(ir::print(g), before);
}

TEST(Dce, KeepsDonations) {
  ir::Graph g = ir::parse(R"(
    graph @f(%w: f32[4], %x: f32[4]) donate(%w: 1) {
      %0 = exp(%x) : f32[4]
      %1 = neg(%w) : f32[4]
      return %x, %1
    })");
  EXPECT_TRUE(dce(g));
  ASSERT_EQ(g.donations().size(), 1u);
  EXPECT_EQ(g.donations()[0], (ir::Donation{0, 1}));
  EXPECT_EQ(g.results().size(), 2u);
  EXPECT_NO_THROW(ir::verify(g));
  EXPECT_FALSE(dce(g));
}

}  // namespace
}  // namespace lt::passes
