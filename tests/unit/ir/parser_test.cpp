#include "ir/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "ir/error.h"
#include "ir/graph.h"

namespace lt::ir {
namespace {

/// Parses, checks the graph against the op rules, and prints it back.
std::string round_trip(std::string_view text) {
  Graph g = parse(text);
  verify(g);
  return print(g);
}

/// The parse error message for `text`, or "no error".
std::string parse_error(std::string_view text) {
  try {
    parse(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Parser, RoundTripsMultiOutputAndIndexedUses) {
  const std::string text = R"(graph @step(%w: f32[512,784], %x: f32[128,784], %g: f32[512], %b: f32[512], %rm: f32[512], %rv: f32[512]) {
  %0 = matmul(%x, %w) {transpose_a=false, transpose_b=true} : f32[128,512]
  %1:5 = batch_norm(%0, %g, %b, %rm, %rv) {eps=1e-05, momentum=0.1, axis=1} : (f32[128,512], f32[512], f32[512], f32[512], f32[512])
  %2 = add(%1#0, %0) : f32[128,512]
  return %2, %1#1
}
)";
  EXPECT_EQ(round_trip(text), text);
  Graph g = parse(text);
  ASSERT_EQ(g.nodes().size(), 3u);
  EXPECT_EQ(g.name(), "step");
  EXPECT_EQ(g.params()[1].name, "x");
  EXPECT_EQ(g.node(1).types.size(), 5u);
  EXPECT_EQ(g.node(2).inputs[0], Value::node(1, 0));
  EXPECT_EQ(g.node(2).inputs[1], Value::node(0));
  EXPECT_EQ(g.results()[1], Value::node(1, 1));
  EXPECT_EQ(g.node(0).inputs[1], Value::param(0));
}

TEST(Parser, RoundTripsEveryAttributeFieldType) {
  const std::string text = R"(graph @attrs(%x: f32[2,3,4], %ids: i64[5], %key: i64[], %ctr: i64[], %labels: i32[6], %img: f32[1,2,4,4]) {
  %0 = sum(%x) {axes=[0,2], keepdim=true} : f32[1,3,1]
  %1 = cast(%x) {to=bf16} : bf16[2,3,4]
  %2 = softmax(%x) {axis=2} : f32[2,3,4]
  %3 = pad(%x) {lo=[1,0,0], hi=[0,0,2], value=-inf} : f32[3,3,6]
  %4 = full() {shape=[], dtype=f32, value=nan} : f32[]
  %5 = iota() {size=4, dtype=f64, start=0.1, step=-2.5} : f64[4]
  %6 = one_hot(%ids) {num_classes=10, dtype=f32} : f32[5,10]
  %7 = mean(%x) {axes=[], keepdim=false} : f32[]
  %8 = full() {shape=[2], dtype=f64, value=inf} : f64[2]
  %9 = full() {shape=[2,1], dtype=f64, value=1e+20} : f64[2,1]
  %10 = full() {shape=[1], dtype=f32, value=-0} : f32[1]
  %11 = rand_normal(%key, %ctr) {shape=[2,2], dtype=f64} : f64[2,2]
  %12 = reshape(%x) {shape=[6,4]} : f32[6,4]
  %13 = cross_entropy(%12, %labels) {label_smoothing=0.1, ignore_index=-100} : f32[]
  %14 = max_pool2d(%img) {kernel=[1,2], stride=[1,1], padding=[0,1], grad_shape=[], ceil_mode=false, count_include_pad=true} : f32[1,2,4,5]
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %13, %14
}
)";
  EXPECT_EQ(round_trip(text), text);
  Graph g = parse(text);
  EXPECT_EQ(std::get<ReduceAttrs>(g.node(0).attrs), (ReduceAttrs{{0, 2}, true}));
  EXPECT_EQ(std::get<CastAttrs>(g.node(1).attrs).to, DType::BF16);
  EXPECT_EQ(std::get<AxisAttrs>(g.node(2).attrs).axis, 2);
  EXPECT_EQ(std::get<PadAttrs>(g.node(3).attrs).value, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(std::get<FullAttrs>(g.node(4).attrs).value));
  EXPECT_EQ(std::get<IotaAttrs>(g.node(5).attrs).start, 0.1);
  EXPECT_EQ(std::get<FullAttrs>(g.node(9).attrs).value, 1e20);
  EXPECT_TRUE(std::signbit(std::get<FullAttrs>(g.node(10).attrs).value));
  EXPECT_EQ(std::get<CrossEntropyAttrs>(g.node(13).attrs).label_smoothing, 0.1);
  EXPECT_EQ(g.type(Value::node(4)), (TensorType{DType::F32, {}}));
}

TEST(Parser, RoundTripsEveryDType) {
  const std::string text = R"(graph @dtypes(%a: bool[2], %b: i32[2], %c: i64[2], %d: f16[2], %e: bf16[2], %f: f32[2], %g: f64[]) {
  %0 = cast(%d) {to=f64} : f64[2]
  %1 = cast(%a) {to=i32} : i32[2]
  %2 = cast(%e) {to=f16} : f16[2]
  return %a, %b, %c, %d, %e, %f, %g, %0, %1, %2
}
)";
  EXPECT_EQ(round_trip(text), text);
  Graph g = parse(text);
  for (size_t i = 0; i < std::size(kAllDTypes); ++i)
    EXPECT_EQ(g.params()[i].type.dtype, kAllDTypes[i]) << i;
}

TEST(Parser, RoundTripsEmptyGraphAndVariadicOp) {
  const std::string empty = "graph @empty() {\n  return\n}\n";
  EXPECT_EQ(round_trip(empty), empty);
  const std::string cat = R"(graph @cat(%a: f32[2,3], %b: f32[2,1]) {
  %0 = concat(%a, %b, %a) {axis=1} : f32[2,7]
  return %0
}
)";
  EXPECT_EQ(round_trip(cat), cat);
}

TEST(Parser, AcceptsCommentsBlankLinesAndAnyWhitespace) {
  const std::string text = R"(// RUN: lt-opt %s --passes=cse | FileCheck %s

graph   @f ( %x :f32 [ 4 , 8 ] ,%y:f32[8]){   // the header
	%0=add( %x,%y ):f32[4,8]

  %1 : 3 = layer_norm(%0, %y, %y) { eps = 0.001 } : ( f32[4,8] , f32[4], f32[4] )
  return %1 # 2 , %0   // two results
}
// CHECK: add(%x, %y)
)";
  EXPECT_EQ(round_trip(text), R"(graph @f(%x: f32[4,8], %y: f32[8]) {
  %0 = add(%x, %y) : f32[4,8]
  %1:3 = layer_norm(%0, %y, %y) {eps=0.001} : (f32[4,8], f32[4], f32[4])
  return %1#2, %0
}
)");
}

TEST(Parser, HashSurvivesPrintAndParse) {
  Graph g("net");
  Value x = g.add_param({DType::F32, {8, 16}}, "x");
  Value w = g.add_param({DType::F32, {16, 4}}, "w");
  Value lr = g.add_param({DType::F32, {}}, "lr");
  Value h = g.add(Op::MatMul, {x, w}, MatMulAttrs{});
  Value r = g.add(Op::Relu, {h}, NoAttrs{});
  Value s = g.add(Op::Sum, {r}, ReduceAttrs{{1}, false});
  Value m = g.add(Op::Mul, {s, lr}, NoAttrs{});
  g.set_results({m, r});
  Graph back = parse(print(g));
  EXPECT_EQ(structural_hash(back), structural_hash(g));
  EXPECT_EQ(print(back), print(g));
  EXPECT_NO_THROW(verify(back));
}

TEST(Parser, DefaultParameterNamesNeverCollide) {
  // A default "p<number>" must skip an explicit name that took it, or the text would not parse.
  Graph g("f");
  g.add_param({DType::F32, {}}, "p1");
  Value b = g.add_param({DType::F32, {}});
  EXPECT_EQ(g.params()[1].name, "p2");
  g.set_results({b});
  EXPECT_EQ(print(parse(print(g))), print(g));
  EXPECT_THROW(g.add_param({DType::F32, {}}, "p1"), InternalError);
  EXPECT_THROW(g.add_param({DType::F32, {}}, "fc1.weight"), InternalError);
}

TEST(Parser, HashIgnoresNamesButNotAttributes) {
  const char* a = "graph @a(%x: f32[4]) {\n  %0 = sum(%x) {axes=[0], keepdim=false} : f32[]\n"
                  "  return %0\n}\n";
  const char* b = "graph @b(%y: f32[4]) {\n  %0 = sum(%y) {axes=[0], keepdim=false} : f32[]\n"
                  "  return %0\n}\n";
  const char* c = "graph @a(%x: f32[4]) {\n  %0 = sum(%x) {axes=[0], keepdim=true} : f32[1]\n"
                  "  return %0\n}\n";
  EXPECT_EQ(structural_hash(parse(a)), structural_hash(parse(b)));
  EXPECT_NE(structural_hash(parse(a)), structural_hash(parse(c)));
}

TEST(Parser, KeepsTypeCheckingForVerify) {
  // Syntax is fine, types are not: parse accepts, verify names the node.
  Graph g = parse("graph @f(%x: f32[4]) {\n  %0 = relu(%x) : f32[5]\n  return %0\n}\n");
  EXPECT_THROW(verify(g), Error);
}

TEST(ParserErrors, UnknownOp) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = matmull(%x, %x) : f32[4]\n"
                        "  return %0\n}\n"),
            "line 2, column 8: unknown op 'matmull'");
}

TEST(ParserErrors, BadDType) {
  EXPECT_EQ(parse_error("graph @f(%x: f31[4]) {\n  return %x\n}\n"),
            "line 1, column 14: unknown dtype 'f31'");
}

TEST(ParserErrors, MissingField) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4,4]) {\n"
                        "  %0 = matmul(%x, %x) {transpose_a=false} : f32[4,4]\n  return %0\n}\n"),
            "line 2, column 41: missing attribute 'transpose_b' for matmul, got '}'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = sum(%x) : f32[]\n  return %0\n}\n"),
            "line 2, column 16: expected attributes {axes, keepdim} for sum, got ':'");
}

// An optional field (f32_out) may be left out, and then holds its default; the printer leaves it
// out while it does, and writes it when set.
TEST(Parser, OptionalFieldIsLeftOutAtItsDefault) {
  const char* text =
      "graph @f(%a: bf16[2,3], %b: bf16[3,4]) {\n"
      "  %0 = matmul(%a, %b) {transpose_a=false, transpose_b=false} : bf16[2,4]\n"
      "  %1 = matmul(%a, %b) {transpose_a=false, transpose_b=false, f32_out=true} : f32[2,4]\n"
      "  return %0, %1\n"
      "}\n";
  const Graph g = parse(text);
  EXPECT_FALSE(std::get<MatMulAttrs>(g.node(0).attrs).f32_out);
  EXPECT_TRUE(std::get<MatMulAttrs>(g.node(1).attrs).f32_out);
  EXPECT_EQ(print(g), text);
  EXPECT_NE(attrs_hash(g.node(0).attrs), attrs_hash(g.node(1).attrs));
}

TEST(ParserErrors, UnknownAndDuplicateField) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4,4]) {\n  %0 = matmul(%x, %x) {transpose_c=true} : "
                        "f32[4,4]\n  return %0\n}\n"),
            "line 2, column 24: unknown attribute 'transpose_c' for matmul (expects transpose_a, "
            "transpose_b, f32_out)");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = softmax(%x) {axis=0, axis=0} : f32[4]\n"
                        "  return %0\n}\n"),
            "line 2, column 29: duplicate attribute 'axis'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = relu(%x) {axis=0} : f32[4]\n"
                        "  return %0\n}\n"),
            "line 2, column 17: relu takes no attributes, got '{'");
}

TEST(ParserErrors, WrongAttributeValueKind) {
  auto err = [](std::string_view node) {
    return parse_error("graph @f(%x: f32[4]) {\n  " + std::string(node) + "\n  return %0\n}\n");
  };
  EXPECT_EQ(err("%0 = sum(%x) {axes=0, keepdim=false} : f32[]"),
            "line 2, column 22: attribute 'axes' of sum expects a list of integers like [1,2], "
            "got '0'");
  EXPECT_EQ(err("%0 = sum(%x) {axes=[0], keepdim=1} : f32[]"),
            "line 2, column 35: attribute 'keepdim' of sum expects true or false, got '1'");
  EXPECT_EQ(err("%0 = softmax(%x) {axis=0.5} : f32[4]"),
            "line 2, column 26: attribute 'axis' of softmax expects an integer, got '0.5'");
  EXPECT_EQ(err("%0 = cast(%x) {to=f31} : f32[4]"),
            "line 2, column 21: attribute 'to' of cast expects a dtype, got 'f31'");
  EXPECT_EQ(err("%0 = softmax(%x) {axis=99999999999999999999} : f32[4]"),
            "line 2, column 26: integer out of range, got '99999999999999999999'");
  EXPECT_EQ(err("%0 = full() {shape=[], dtype=f32, value=1e999} : f32[]"),
            "line 2, column 43: number out of range, got '1e999'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4], %g: f32[4]) {\n"
                        "  %0:3 = layer_norm(%x, %g, %g) {eps=true} : (f32[4], f32[], f32[])\n"
                        "  return %0#0\n}\n"),
            "line 2, column 38: attribute 'eps' of layer_norm expects a number, got 'true'");
}

TEST(ParserErrors, UndefinedValues) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = relu(%y) : f32[4]\n  return %0\n}\n"),
            "line 2, column 13: use of undefined value '%y'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = add(%x, %0) : f32[4]\n  return %0\n}\n"),
            "line 2, column 16: use of undefined value '%0'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  return %1\n}\n"),
            "line 2, column 10: use of undefined value '%1'");
}

TEST(ParserErrors, OutputIndices) {
  const std::string head =
      "graph @f(%x: f32[2,4], %g: f32[4]) {\n"
      "  %0:3 = layer_norm(%x, %g, %g) {eps=0.1} : (f32[2,4], f32[2], f32[2])\n";
  EXPECT_EQ(parse_error(head + "  return %0\n}\n"),
            "line 3, column 10: '%0' has 3 outputs; name one as %0#<index>");
  EXPECT_EQ(parse_error(head + "  return %0#3\n}\n"),
            "line 3, column 13: output index out of range for '%0' (3 outputs), got '3'");
  EXPECT_EQ(parse_error(head + "  %1 = relu(%x) : f32[2,4]\n  return %1#0\n}\n"),
            "line 4, column 12: '%1' has one output and takes no '#index', got '#'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[2,4], %g: f32[4]) {\n"
                        "  %0:3 = layer_norm(%x, %g, %g) {eps=0.1} : (f32[2,4], f32[2])\n"
                        "  return %0#0\n}\n"),
            "line 2, column 62: node %0 declares 3 outputs but lists 2 types, got ')'");
}

TEST(ParserErrors, NonSequentialId) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %1 = relu(%x) : f32[4]\n  return %1\n}\n"),
            "line 2, column 3: node ids must be sequential from %0: expected %0, got '%1'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = relu(%x) : f32[4]\n"
                        "  %00 = relu(%0) : f32[4]\n  return %0\n}\n"),
            "line 3, column 3: node ids must be sequential from %0: expected %1, got '%00'");
}

TEST(ParserErrors, UnterminatedGraph) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = relu(%x) : f32[4]\n"),
            "line 3, column 1: unterminated graph @f: expected a node or 'return', got end of "
            "input");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  return %x\n"),
            "line 3, column 1: expected '}' to close graph @f, got end of input");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  return %x\n}\ngraph"),
            "line 4, column 1: expected end of input after the graph, got 'graph'");
}

TEST(ParserErrors, HeaderAndLexicalMistakes) {
  EXPECT_EQ(parse_error("graph @f(%x: f32[4], %x: f32[4]) {\n  return %x\n}\n"),
            "line 1, column 22: duplicate parameter '%x'");
  EXPECT_EQ(parse_error("graph @f(%1: f32[4]) {\n  return\n}\n"),
            "line 1, column 10: parameter names are identifiers ([A-Za-z_][A-Za-z0-9_]*), "
            "got '%1'");
  EXPECT_EQ(parse_error("graph @f(%x: f32[-4]) {\n  return\n}\n"),
            "line 1, column 17: negative dimension -4 in a type, got '['");
  // Found by fuzz_ir_lower's checks on hand-written inputs: element counts past int64
  // overflowed numel() (UBSan). The limit counts non-zero dims only, so no dim order overflows.
  EXPECT_EQ(parse_error("graph @f(%x: f32[4294967296,4294967296,0]) {\n  return\n}\n"),
            "line 1, column 17: shape [4294967296,4294967296,0] has more than 281474976710656 "
            "elements");
  EXPECT_EQ(parse_error("graph @f(%x: f32[16777216,16777216]) {\n  return %x\n}\n"), "no error");
  EXPECT_EQ(parse_error("graph @f(%x: f32[4]) {\n  %0 = relu($x) : f32[4]\n  return %0\n}\n"),
            "line 2, column 13: unexpected character '$'");
  EXPECT_EQ(parse_error("func @f() {\n  return\n}\n"),
            "line 1, column 1: expected 'graph', got 'func'");
  EXPECT_EQ(parse_error(""), "line 1, column 1: expected 'graph', got end of input");
}

}  // namespace
}  // namespace lt::ir
