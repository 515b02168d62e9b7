// A cache hit hashes the tracer's pending nodes without building an ir::Graph, so that hash must
// be exactly ir::structural_hash of the graph a miss builds (and of that graph parsed back from
// its text), or a hit could run another graph's code. Checked over every op sample and over
// random DAGs replayed through the tracer, donations included.
#include <gtest/gtest.h>

#include <map>

#include "frontend/lazy/cut.h"
#include "frontend/lazy/tracer.h"
#include "frontend/tensor_impl.h"
#include "ir/parser.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/op_samples.h"
#include "tests/support/random_graph.h"

namespace lt {
namespace {

/// Cuts the pending graph of `outs`; returns its node count after checking the hash.
size_t check_cut(std::span<const Tensor> outs, const std::string& what) {
  std::vector<TensorImpl*> targets;
  for (const Tensor& t : outs)
    if (is_pending(t)) targets.push_back(t.impl());
  if (targets.empty()) return 0;
  const lazy::Cut c = lazy::cut(targets);
  const ir::Graph g = lazy::build_graph(c);
  EXPECT_EQ(c.hash, ir::structural_hash(g)) << what << "\n" << ir::print(g);
  EXPECT_EQ(c.hash, ir::structural_hash(ir::parse(ir::print(g)))) << what;
  return c.order.size();
}

TEST(CutHash, EqualsStructuralHashForEveryOpSample) {
  size_t graphs = 0;
  for (ir::Op op : ir::all_ops())
    for (const testing::OpSample& s : testing::samples_for(op)) {
      ModeGuard lazy(Mode::Lazy);
      const std::vector<Tensor> outs = testing::run_sample(s);
      graphs += check_cut(outs, s.label()) > 0;
    }
  EXPECT_GT(graphs, 100u);
}

TEST(CutHash, EqualsStructuralHashForRandomGraphsWithDonations) {
  int donations = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    testing::RandomGraph rg("cut");
    rg.add_dag(seed);
    const ir::Graph& g = rg.graph();
    ModeGuard lazy(Mode::Lazy);
    std::vector<Tensor> params;
    for (size_t p = 0; p < g.params().size(); ++p) {
      auto impl = std::make_shared<TensorImpl>();
      impl->type = g.params()[p].type;
      impl->buffer = rg.params()[p];
      params.emplace_back(std::move(impl));
    }
    std::vector<std::vector<Tensor>> values(g.nodes().size());
    auto value = [&](ir::Value v) { return v.is_param() ? params[v.param_index()]
                                                        : values[v.def][v.index]; };
    for (size_t id = 0; id < g.nodes().size(); ++id) {
      const ir::Node& n = g.node(static_cast<int>(id));
      std::vector<Tensor> ins;
      for (ir::Value v : n.inputs) ins.push_back(value(v));
      values[id].resize(n.types.size());
      lazy::trace_into(n.op, ins, n.attrs, n.types, Loc::current(), values[id]);
    }
    std::vector<Tensor> outs;
    for (ir::Value v : g.results()) outs.push_back(value(v));
    // The tracer turns a tensor rebound in place into a donation of its old buffer.
    for (const ir::Donation& d : g.donations()) {
      outs[d.result].impl()->donor = rg.params()[d.param];
      ++donations;
    }
    check_cut(outs, "seed " + std::to_string(seed));
  }
  EXPECT_GT(donations, 0);
}

TEST(CutHash, DiffersWhenTheGraphDiffers) {
  ModeGuard lazy(Mode::Lazy);
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {4});
  const Tensor y = from_vector<float>({1, 2, 3, 4}, {2, 2});
  std::map<uint64_t, std::string> seen;
  auto hash_of = [&](const Tensor& t) {
    std::vector<TensorImpl*> targets{t.impl()};
    return lazy::cut(targets).hash;
  };
  const std::pair<std::string, Tensor> cases[] = {
      {"exp(x)", exp(x)},
      {"exp(y)", exp(y)},
      {"log(x)", log(x)},
      {"exp(exp(x))", exp(exp(x))},
      {"x + x", x + x},
      {"x + 2x", x + x * 2.0},
  };
  for (const auto& [name, t] : cases) {
    const auto [it, fresh] = seen.emplace(hash_of(t), name);
    EXPECT_TRUE(fresh) << name << " hashes like " << it->second;
  }
}

}  // namespace
}  // namespace lt
