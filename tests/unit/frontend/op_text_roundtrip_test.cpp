// Text round-trip over every op of the tables, through the shared samples (f64 and f32): a graph
// of the sample's op prints, parses back to the same text, verifies, and keeps its structural
// hash. A new row in ir/ops/*.def is covered once it has samples (OpTableCoverage).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/parser.h"
#include "tests/support/op_samples.h"

namespace lt {
namespace {

using testing::OpSample;

/// The sample and, where it takes floats, its f32 form.
std::vector<OpSample> both_dtypes(ir::Op op) {
  std::vector<OpSample> out;
  for (const OpSample& s : testing::samples_for(op)) {
    out.push_back(s);
    if (testing::takes_floats(s)) out.push_back(testing::at_dtype(s, DType::F32));
  }
  return out;
}

/// Adds the sample's node to g (its inputs as new parameters); returns the node's id.
int add_sample(ir::Graph& g, const OpSample& s) {
  std::vector<ir::Value> in;
  for (const Tensor& t : s.inputs) in.push_back(g.add_param(t.type()));
  return g.add(s.op, std::move(in), s.attrs).def;
}

/// A graph holding the sample's op, with every output a result. Types come from the op's rule.
ir::Graph sample_graph(const OpSample& s) {
  ir::Graph g{std::string(ir::mnemonic(s.op))};
  const int id = add_sample(g, s);
  std::vector<ir::Value> results;
  for (int i = 0; i < g.num_outputs(id); ++i) results.push_back(ir::Value::node(id, i));
  g.set_results(std::move(results));
  return g;
}

template <size_t... I>
ir::Attrs default_attrs(size_t index, std::index_sequence<I...>) {
  ir::Attrs a;
  ((index == I ? (a.emplace<I>(), true) : false) || ...);
  return a;
}

class OpTextRoundTrip : public ::testing::TestWithParam<ir::Op> {};

TEST_P(OpTextRoundTrip, PrintParsePrintIsIdentityAndKeepsHash) {
  for (const OpSample& s : both_dtypes(GetParam())) {
    const ir::Graph g = sample_graph(s);
    const std::string text = ir::print(g);
    SCOPED_TRACE(s.label() + "\n" + text);
    ir::Graph back = ir::parse(text);
    EXPECT_EQ(ir::print(back), text);
    EXPECT_EQ(ir::structural_hash(back), ir::structural_hash(g));
    EXPECT_NO_THROW(ir::verify(back));
    ASSERT_EQ(back.nodes().size(), 1u);
    EXPECT_EQ(back.node(0).types, g.node(0).types);
  }
}

// Printing default attributes only would leave the parser's handling of the others untested.
TEST_P(OpTextRoundTrip, SomeSampleUsesNonDefaultAttributes) {
  const ir::Op op = GetParam();
  const ir::Attrs dflt = default_attrs(ir::info(op).attrs_index,
                                       std::make_index_sequence<std::variant_size_v<ir::Attrs>>{});
  const bool has_fields = std::visit([](const auto& a) { return a.kNames.size() > 0; }, dflt);
  if (!has_fields) return;
  bool any = false;
  for (const OpSample& s : testing::samples_for(op)) any = any || s.attrs != dflt;
  EXPECT_TRUE(any) << ir::mnemonic(op);
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpTextRoundTrip, ::testing::ValuesIn(ir::all_ops()),
                         [](const ::testing::TestParamInfo<ir::Op>& p) {
                           return std::string(ir::info(p.param).name);
                         });

TEST(OpTextRoundTrip, AllSamplesInOneGraph) {
  // Every op's samples side by side: ids, parameter numbering and wiring still round-trip.
  ir::Graph g("all");
  std::vector<ir::Value> results;
  for (ir::Op op : ir::all_ops())
    for (const OpSample& s : testing::samples_for(op)) {
      const int id = add_sample(g, s);
      results.push_back(ir::Value::node(id, g.num_outputs(id) - 1));
    }
  g.set_results(results);
  ir::Graph back = ir::parse(ir::print(g));
  EXPECT_EQ(ir::print(back), ir::print(g));
  EXPECT_EQ(ir::structural_hash(back), ir::structural_hash(g));
  EXPECT_NO_THROW(ir::verify(back));
}

}  // namespace
}  // namespace lt
