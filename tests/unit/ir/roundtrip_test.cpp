// Text round-trip over every op in the tables: print -> parse -> print is the identity and the
// structural hash survives. example() has one case per op and no default, so a new row in
// ir/ops/*.def breaks the build (-Werror=switch) until it gets an example here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/parser.h"

namespace lt::ir {
namespace {

struct Example {
  std::vector<TensorType> params;
  Attrs attrs;
};

TensorType t(DType dt, Shape s) { return {dt, std::move(s)}; }
TensorType f32(Shape s) { return t(DType::F32, std::move(s)); }

/// Operand types and representative non-default attributes that the op's rule accepts.
Example example(Op op) {
  const double inf = std::numeric_limits<double>::infinity();
  // conv2d over x[2,4,9,9] with w[6,2,3,3]: stride 2, padding 1, dilation [2,1], groups 2.
  const ConvAttrs conv{{2, 2}, {1, 1}, {2, 1}, 2, {}};
  const Shape conv_x{2, 4, 9, 9}, conv_w{6, 2, 3, 3}, conv_y{2, 6, 4, 5};
  // 3x3 windows over x[1,2,6,7], stride 2, padding 1 -> [1,2,3,4].
  const PoolAttrs pool{{3, 3}, {2, 2}, {1, 1}, {}};
  const Shape pool_x{1, 2, 6, 7}, pool_y{1, 2, 3, 4};
  const NoAttrs none;
  switch (op) {
    case Op::Neg: return {{t(DType::I64, {2, 3})}, none};
    case Op::Abs: return {{t(DType::I32, {5})}, none};
    case Op::Relu: return {{t(DType::F64, {2, 3})}, none};
    case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt: case Op::Tanh: case Op::Sigmoid:
    case Op::Gelu: case Op::Sin: case Op::Cos: case Op::Reciprocal: case Op::IsFinite:
      return {{f32({2, 3})}, none};
    case Op::Cast: return {{f32({2, 3})}, CastAttrs{DType::BF16}};
    case Op::Add: case Op::Sub: case Op::Mul: case Op::Pow: case Op::Maximum: case Op::Minimum:
      return {{f32({2, 3}), f32({3})}, none};  // broadcasting
    case Op::Div: return {{t(DType::I32, {4, 1}), t(DType::I32, {1, 5})}, none};
    case Op::Eq: return {{t(DType::Bool, {4}), t(DType::Bool, {4})}, none};
    case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
      return {{f32({4}), f32({})}, none};
    case Op::Where: return {{t(DType::Bool, {2, 1}), f32({3}), f32({2, 3})}, none};
    case Op::Sum: return {{t(DType::I64, {2, 3, 4})}, ReduceAttrs{{0, 2}, true}};
    case Op::Mean: case Op::ReduceMax: case Op::ReduceMin: case Op::LogSumExp:
      return {{f32({2, 3, 4})}, ReduceAttrs{{0, 2}, true}};
    case Op::ArgMax: return {{f32({2, 3, 4})}, ReduceAttrs{{1}, false}};
    case Op::Reshape: return {{f32({2, 3, 4})}, ReshapeAttrs{{6, 4}}};
    case Op::Permute: return {{f32({2, 3, 4})}, PermuteAttrs{{2, 0, 1}}};
    case Op::Expand: return {{f32({3, 1})}, ExpandAttrs{{2, 3, 5}}};
    case Op::Slice: return {{f32({4, 6})}, SliceAttrs{{1, 0}, {4, 6}, {2, 3}}};
    case Op::Concat: return {{f32({2, 3}), f32({2, 1}), f32({2, 2})}, ConcatAttrs{1}};
    case Op::Pad: return {{f32({2, 3})}, PadAttrs{{1, 0}, {0, 2}, -inf}};
    case Op::MatMul: return {{f32({4, 3, 5}), f32({7, 3})}, MatMulAttrs{true, true}};
    case Op::Conv2d: return {{f32(conv_x), f32(conv_w)}, conv};
    case Op::Conv2dInputGrad: {
      ConvAttrs a = conv;
      a.grad_shape = conv_x;
      return {{f32(conv_y), f32(conv_w)}, a};
    }
    case Op::Conv2dWeightGrad: {
      ConvAttrs a = conv;
      a.grad_shape = conv_w;
      return {{f32(conv_x), f32(conv_y)}, a};
    }
    case Op::MaxPool2d: case Op::AvgPool2d: return {{t(DType::F64, pool_x)}, pool};
    case Op::MaxPool2dGrad: return {{f32(pool_x), f32(pool_y)}, pool};
    case Op::AvgPool2dGrad: {
      PoolAttrs a = pool;
      a.grad_shape = pool_x;
      return {{f32(pool_y)}, a};
    }
    case Op::BatchNorm: return {{f32({8, 4, 3}), f32({4}), f32({4})}, NormAttrs{1e-3}};
    case Op::LayerNorm: return {{f32({8, 4, 3}), f32({4, 3}), f32({4, 3})}, NormAttrs{0.1}};
    case Op::Softmax: return {{f32({2, 5})}, AxisAttrs{1}};
    case Op::LogSoftmax: return {{t(DType::F64, {2, 5})}, AxisAttrs{0}};
    case Op::CrossEntropy: return {{f32({4, 10}), t(DType::I64, {4})}, CrossEntropyAttrs{0.1}};
    case Op::Embedding: return {{f32({10, 8}), t(DType::I32, {2, 3})}, none};
    case Op::EmbeddingGrad:
      return {{f32({2, 3, 8}), t(DType::I32, {2, 3})}, EmbeddingGradAttrs{10}};
    case Op::OneHot: return {{t(DType::I64, {5})}, OneHotAttrs{10, DType::F64}};
    case Op::Full: return {{}, FullAttrs{{2, 3}, DType::I32, 7}};
    case Op::Iota: return {{}, IotaAttrs{5, DType::F32, 1.5, -0.25}};
    case Op::RandUniform:
      return {{t(DType::I64, {}), t(DType::I64, {})}, RandomAttrs{{3, 4}, DType::F32}};
    case Op::RandNormal:
      return {{t(DType::I64, {}), t(DType::I64, {})}, RandomAttrs{{}, DType::F64}};
  }
  LT_UNREACHABLE();
}

/// A graph holding the op's example, with every output a result. Types come from the op's rule.
Graph example_graph(Op op) {
  Example ex = example(op);
  Graph g{std::string(mnemonic(op))};
  std::vector<Value> in;
  for (size_t i = 0; i < ex.params.size(); ++i)
    in.push_back(g.add_param(ex.params[i], fmt::format("a{}", i)));
  const Value v = g.add(op, std::move(in), std::move(ex.attrs));
  std::vector<Value> results;
  for (int i = 0; i < g.num_outputs(v.def); ++i) results.push_back(Value::node(v.def, i));
  g.set_results(std::move(results));
  return g;
}

template <size_t... I>
Attrs default_attrs(size_t index, std::index_sequence<I...>) {
  Attrs a;
  ((index == I ? (a.emplace<I>(), true) : false) || ...);
  return a;
}

class RoundTrip : public ::testing::TestWithParam<Op> {};

TEST_P(RoundTrip, PrintParsePrintIsIdentityAndKeepsHash) {
  const Op op = GetParam();
  const Graph g = example_graph(op);
  const std::string text = print(g);
  Graph back = parse(text);
  EXPECT_EQ(print(back), text);
  EXPECT_EQ(structural_hash(back), structural_hash(g)) << text;
  EXPECT_NO_THROW(verify(back)) << text;
  ASSERT_EQ(back.nodes().size(), 1u);
  EXPECT_EQ(back.node(0).types, g.node(0).types);
}

TEST_P(RoundTrip, ExampleUsesNonDefaultAttributes) {
  const Op op = GetParam();
  const Graph g = example_graph(op);
  const size_t idx = info(op).attrs_index;
  const bool has_fields = std::visit([](const auto& s) { return s.kNames.size() > 0; },
                                     g.node(0).attrs);
  const Attrs dflt = default_attrs(idx, std::make_index_sequence<std::variant_size_v<Attrs>>{});
  if (has_fields) {
    EXPECT_NE(g.node(0).attrs, dflt) << print(g);
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, RoundTrip, ::testing::ValuesIn(all_ops()),
                         [](const ::testing::TestParamInfo<Op>& p) {
                           return std::string(ir::info(p.param).name);
                         });

TEST(RoundTrip, AllExamplesInOneGraph) {
  // Every op side by side in one graph: ids, parameter numbering and wiring still round-trip.
  Graph g("all");
  std::vector<Value> results;
  for (Op op : all_ops()) {
    Example ex = example(op);
    std::vector<Value> in;
    for (const TensorType& ty : ex.params) in.push_back(g.add_param(ty));
    const Value v = g.add(op, std::move(in), std::move(ex.attrs));
    results.push_back(Value::node(v.def, g.num_outputs(v.def) - 1));
  }
  g.set_results(results);
  Graph back = parse(print(g));
  EXPECT_EQ(print(back), print(g));
  EXPECT_EQ(structural_hash(back), structural_hash(g));
  EXPECT_NO_THROW(verify(back));
}

}  // namespace
}  // namespace lt::ir
