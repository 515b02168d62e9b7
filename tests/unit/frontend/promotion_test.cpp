// Type promotion against PyTorch 1.13: every case of tests/data/promotion_cases.json (made by
// promotion_cases.py: the result dtype and values, or PyTorch's error), eagerly and lazily; the
// gradients of mixed-dtype ops in each input's dtype; promotion after autocast's casts.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lt/autocast.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using json = nlohmann::json;
using testing::error_of;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_PROMOTION_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

DType dtype_of(const json& name) {
  DType t;
  if (!parse_dtype(name.get<std::string>(), &t)) throw Error("unknown dtype " + name.dump());
  return t;
}

bool is_number(const json& o) {
  return o["kind"] == "int" || o["kind"] == "float" || o["kind"] == "bool";
}

Scalar number(const json& o) {
  const json& v = o["values"][0];
  if (o["kind"] == "bool") return Scalar(v.get<bool>());
  if (o["kind"] == "int") return Scalar(v.get<int64_t>());
  return Scalar(v.get<double>());
}

/// A tensor operand, made eagerly (lazy steps read it as a parameter).
Tensor tensor(const json& o) {
  std::vector<double> v;
  for (const json& x : o["values"]) v.push_back(x.is_boolean() ? x.get<bool>() : x.get<double>());
  ModeGuard eager(Mode::Eager);
  const Shape shape = o["kind"] == "zero_dim" ? Shape{}
                      : o["kind"] == "matrix" ? Shape{2, static_cast<int64_t>(v.size()) / 2}
                                              : Shape{static_cast<int64_t>(v.size())};
  return cast(from_vector<double>(v, shape), dtype_of(o["dtype"]));
}

Tensor binary(const std::string& op, const Tensor& a, const Tensor& b) {
  if (op == "add") return add(a, b);
  if (op == "sub") return sub(a, b);
  if (op == "mul") return mul(a, b);
  if (op == "div") return div(a, b);
  if (op == "maximum") return maximum(a, b);
  if (op == "minimum") return minimum(a, b);
  if (op == "eq") return eq(a, b);
  if (op == "ne") return ne(a, b);
  if (op == "lt") return lt(a, b);
  if (op == "le") return le(a, b);
  if (op == "gt") return gt(a, b);
  if (op == "ge") return ge(a, b);
  if (op == "pow") return pow(a, b);
  if (op == "fmod") return fmod(a, b);
  throw Error("no binary op " + op);
}

Tensor unary(const std::string& op, const Tensor& x) {
  using Fn = Tensor (*)(const Tensor&, Loc);
  static const std::map<std::string, Fn> fns = {
      {"exp", exp},     {"expm1", expm1},   {"log", log},     {"log1p", log1p},
      {"sqrt", sqrt},   {"rsqrt", rsqrt},   {"tanh", tanh},   {"sigmoid", sigmoid},
      {"sin", sin},     {"cos", cos},       {"erf", erf},     {"reciprocal", reciprocal},
      {"silu", silu},   {"relu", relu},     {"abs", abs},     {"neg", neg},
      {"isfinite", isfinite}};
  if (op == "gelu") return gelu(x);
  if (op == "floor") return floor(x);
  if (op == "ceil") return ceil(x);
  if (op == "round") return round(x);
  if (op == "trunc") return trunc(x);
  const auto it = fns.find(op);
  if (it == fns.end()) throw Error("no unary op " + op);
  return it->second(x, Loc::current());
}

/// The C++ operators that take a number, on either side.
Tensor with_number(const std::string& op, const Tensor& t, Scalar s, bool number_first) {
  if (number_first) {
    if (op == "add") return s + t;
    if (op == "sub") return s - t;
    if (op == "mul") return s * t;
    if (op == "div") return s / t;
  } else {
    if (op == "add") return t + s;
    if (op == "sub") return t - s;
    if (op == "mul") return t * s;
    if (op == "div") return t / s;
    if (op == "lt") return t < s;
    if (op == "le") return t <= s;
    if (op == "gt") return t > s;
    if (op == "ge") return t >= s;
    if (op == "pow") return pow(t, s);
    if (op == "fmod") return fmod(t, s);
  }
  throw Error("no operator for " + op);
}

Tensor in_place(const std::string& op, Tensor t, const json& other) {
  if (is_number(other)) {
    if (op == "add_") return t.add_(number(other));
    if (op == "mul_") return t.mul_(number(other));
  } else {
    if (op == "add_") return t.add_(tensor(other));
    if (op == "sub_") return t.sub_(tensor(other));
    if (op == "mul_") return t.mul_(tensor(other));
  }
  throw Error("no in-place op " + op);
}

/// Runs a case in the current mode.
Tensor run(const json& c) {
  const std::string op = c["op"];
  const json& in = c["operands"];
  if (op == "cat" || op == "stack" || op == "matmul") {
    std::vector<Tensor> xs;
    for (const json& o : in) xs.push_back(tensor(o));
    if (op == "matmul") return matmul(xs[0], xs[1]);
    return op == "cat" ? concat(xs, 0) : stack(xs, 0);
  }
  if (op == "sum") return sum(tensor(in[0]));
  if (op == "mean") return mean(tensor(in[0]));
  if (op == "max") return max(tensor(in[0]));
  if (op == "min") return min(tensor(in[0]));
  if (op == "prod") return prod(tensor(in[0]));
  if (in.size() == 1) return unary(op, tensor(in[0]));
  if (op == "clamp_min") return clamp(tensor(in[0]), number(in[1]));
  if (op == "clamp_max") return clamp(tensor(in[0]), std::nullopt, number(in[1]));
  if (op == "clamp") return clamp(tensor(in[0]), number(in[1]), number(in[2]));
  if (op == "clamp_") {
    Tensor t = tensor(in[0]);
    return t.clamp_(number(in[1]), number(in[2]));
  }
  if (op == "where") {
    const Tensor cond = tensor(in[0]);
    if (is_number(in[1])) return where(cond, number(in[1]), tensor(in[2]));
    if (is_number(in[2])) return where(cond, tensor(in[1]), number(in[2]));
    return where(cond, tensor(in[1]), tensor(in[2]));
  }
  if (op.back() == '_') return in_place(op, tensor(in[0]), in[1]);
  if (is_number(in[0])) return with_number(op, tensor(in[1]), number(in[0]), true);
  if (is_number(in[1])) return with_number(op, tensor(in[0]), number(in[1]), false);
  return binary(op, tensor(in[0]), tensor(in[1]));
}

std::string label(const json& c) {
  std::string s = c["op"].get<std::string>() + "(";
  for (const json& o : c["operands"])
    s += o["kind"].get<std::string>() + " " + o["dtype"].get<std::string>() + ", ";
  return s + ")";
}

void expect_result(const Tensor& r, const json& c, const char* mode) {
  ASSERT_EQ(dtype_name(r.dtype()), c["dtype"].get<std::string>()) << mode << " " << label(c);
  const std::vector<double> got = r.to_vector<double>();
  std::vector<double> want;
  for (const json& x : c["values"])
    want.push_back(x.is_boolean() ? x.get<bool>() : x.get<double>());
  if (!c.contains("rtol")) {
    EXPECT_EQ(got, want) << mode << " " << label(c);
    return;
  }
  ASSERT_EQ(got.size(), want.size()) << mode << " " << label(c);
  const double rtol = c["rtol"].get<double>();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], rtol * std::abs(want[i])) << mode << " " << label(c) << " " << i;
}

/// PyTorch refuses these for want of a kernel, in words naming the kernel; lazytrain's type
/// rule refuses them in its own.
void expect_refused(const std::string& msg, const json& c, const char* mode) {
  EXPECT_NE(msg, "no error") << mode << " " << label(c);
}

/// The message holds PyTorch's text (errors_test.cpp checks the whole of each message).
void expect_error(const std::string& msg, const json& c, const char* mode) {
  EXPECT_NE(msg.find(c["error"].get<std::string>()), std::string::npos)
      << mode << " " << label(c) << ": " << msg;
}

TEST(Promotion, TheCasesCoverEveryDtypePairOpAndOperandKind) {
  ASSERT_GE(cases().size(), 100u);
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::string> ops, kinds;
  for (const json& c : cases()) {
    const json& in = c["operands"];
    ops.insert(c["op"].get<std::string>());
    for (const json& o : in) kinds.insert(o["kind"].get<std::string>());
    if (c["op"] == "add" && in[0]["kind"] == "tensor" && in[1]["kind"] == "tensor")
      pairs.insert({in[0]["dtype"].get<std::string>(), in[1]["dtype"].get<std::string>()});
  }
  EXPECT_EQ(pairs.size(), 49u);
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum", "eq", "ne", "lt", "le",
                         "gt", "ge", "where", "sum", "mean", "add_", "sub_", "mul_"})
    EXPECT_TRUE(ops.count(op)) << op;
  for (const char* op : {"exp", "log", "sqrt", "sigmoid", "gelu", "silu", "relu", "neg",
                         "isfinite", "cat", "stack", "matmul", "pow", "fmod", "trunc", "prod",
                         "clamp", "clamp_"})
    EXPECT_TRUE(ops.count(op)) << op;
  EXPECT_EQ(kinds,
            (std::set<std::string>{"tensor", "zero_dim", "matrix", "int", "float", "bool"}));
}

TEST(Promotion, EagerResultsArePyTorchs) {
  for (const json& c : cases()) {
    if (c.contains("error")) {
      expect_error(error_of([&] { run(c); }), c, "eager");
    } else if (c.contains("refused")) {
      expect_refused(error_of([&] { run(c); }), c, "eager");
    } else {
      expect_result(run(c), c, "eager");
    }
  }
}

TEST(Promotion, LazyResultsArePyTorchs) {
  // Every case in a few steps (one compile each), read after mark_step.
  constexpr size_t kPerStep = 300;
  const json& all = cases();
  for (size_t begin = 0; begin < all.size(); begin += kPerStep) {
    std::vector<std::pair<size_t, Tensor>> results;
    {
      ModeGuard lazy(Mode::Lazy);
      for (size_t i = begin; i < std::min(all.size(), begin + kPerStep); ++i) {
        const json& c = all[i];
        if (c.contains("error")) {
          expect_error(error_of([&] { run(c); }), c, "lazy");
        } else if (c.contains("refused")) {
          expect_refused(error_of([&] { run(c); }), c, "lazy");
        } else {
          results.emplace_back(i, run(c));
        }
      }
      mark_step();
    }
    for (const auto& [i, r] : results) expect_result(r, all[i], "lazy");
  }
}

TEST(PromotionErrors, InPlaceRefusesAResultOfAHigherCategory) {
  Tensor ids = from_vector<int64_t>({1, 2}, {2});
  const int line = __LINE__ + 1;
  const std::string msg = error_of([&] { ids.add_(0.5); });
  EXPECT_EQ(msg, "add_: result type Float can't be cast to the desired output type Long at "
                 "promotion_test.cpp:" + std::to_string(line));
  Tensor mask = from_vector<bool>({true, false}, {2});
  const std::string bool_msg = error_of([&] { mask.mul_(ids); });
  EXPECT_EQ(bool_msg.substr(0, bool_msg.find(" at ")),
            "mul_: result type Long can't be cast to the desired output type Bool");
}

TEST(PromotionErrors, MeanOfAnIntegerTensorIsPyTorchsError) {
  const Tensor ids = from_vector<int64_t>({1, 2}, {2});
  const int line = __LINE__ + 1;
  const std::string msg = error_of([&] { mean(ids); });
  EXPECT_EQ(msg, "mean(): could not infer output dtype. Input dtype must be either a floating "
                 "point or complex dtype. Got: Long at promotion_test.cpp:" +
                     std::to_string(line));
}

TEST(PromotionErrors, SubOfBoolIsPyTorchsError) {
  const Tensor mask = from_vector<bool>({true, false}, {2});
  const int line = __LINE__ + 1;
  const std::string msg = error_of([&] { Tensor r = 1 - mask; });
  EXPECT_EQ(msg, "sub: Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                 "are trying to invert a mask, use the `~` or `logical_not()` operator instead. "
                 "(operands: i64[], bool[2]) at promotion_test.cpp:" + std::to_string(line));
}

TEST(PromotionApi, ResultTypeIsTorchResultType) {
  const Tensor bf = zeros({2}, DType::BF16), ids = zeros({2}, DType::I64);
  EXPECT_EQ(result_type(bf, 2.5), DType::BF16);
  EXPECT_EQ(result_type(ids, 0.5), DType::F32);
  EXPECT_EQ(result_type(ids, 2), DType::I64);
  EXPECT_EQ(result_type(true, ids), DType::I64);
  EXPECT_EQ(result_type(ids, scalar(1.5, DType::F64)), DType::F64);
  EXPECT_EQ(result_type(zeros({2}, DType::I32), scalar(7, DType::I64)), DType::I32);
  EXPECT_EQ(result_type(bf, zeros({2}, DType::F16)), DType::F32);
  EXPECT_EQ(promote_types(DType::F16, DType::BF16), DType::F32);
  EXPECT_EQ(promote_types(DType::Bool, DType::I32), DType::I32);
}

// --- autograd: each input's gradient in its own dtype ------------------------------------------

TEST(PromotionGrad, GradientsComeBackInEachInputsDtype) {
  Tensor w = from_vector<float>({0.5f, -1.5f, 2.0f}, {3});
  w.requires_grad_();
  Tensor v = from_vector<double>({0.1, 3.0, -2.0}, {3});
  v.requires_grad_();
  const Tensor ids = from_vector<int64_t>({2, -1, 4}, {3});
  Tensor y = w * v;         // f64
  Tensor z = y / ids + w;   // f64, true division
  ASSERT_EQ(z.dtype(), DType::F64);
  sum(z).backward();
  ASSERT_EQ(w.grad().dtype(), DType::F32);
  ASSERT_EQ(v.grad().dtype(), DType::F64);
  // d/dw = v / ids + 1: each use's gradient rounded to f32, then summed; d/dv = w / ids.
  const std::vector<float> gw = w.grad().to_vector<float>();
  const std::vector<double> gv = v.grad().to_vector<double>();
  const std::vector<double> vv{0.1, 3.0, -2.0}, wv{0.5, -1.5, 2.0}, iv{2, -1, 4};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(gw[i], static_cast<float>(vv[i] / iv[i]) + 1.0f) << i;
    EXPECT_EQ(gv[i], static_cast<double>(static_cast<float>(wv[i])) / iv[i]) << i;
  }
}

TEST(PromotionGrad, LowPrecisionAndWhereBranchesKeepTheirDtypes) {
  for (const Mode mode : {Mode::Eager, Mode::Lazy}) {
    Tensor h = cast(from_vector<float>({1.5f, -2.0f, 0.25f}, {3}), DType::BF16);
    h.requires_grad_();
    Tensor f = from_vector<float>({3.0f, 0.5f, -1.0f}, {3});
    f.requires_grad_();
    const Tensor mask = from_vector<bool>({true, false, true}, {3});
    Tensor loss;
    {
      ModeGuard guard(mode);
      const Tensor prod = h * 2.5;  // stays bf16
      EXPECT_EQ(prod.dtype(), DType::BF16);
      loss = sum(where(mask, prod, f) * f);  // f32
      EXPECT_EQ(loss.dtype(), DType::F32);
      loss.backward();
      mark_step();
    }
    ASSERT_EQ(h.grad().dtype(), DType::BF16);
    ASSERT_EQ(f.grad().dtype(), DType::F32);
    // d/dh = 2.5 f where the mask is set; d/df = where(mask, 2.5 h, 2 f).
    EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{7.5f, 0.0f, -2.5f}));
    EXPECT_EQ(f.grad().to_vector<float>(), (std::vector<float>{3.75f, 1.0f, 0.625f}));
  }
}


TEST(PromotionGrad, UnaryOpsOfBf16AndConcatPiecesKeepTheirDtypes) {
  for (const Mode mode : {Mode::Eager, Mode::Lazy}) {
    Tensor h = cast(from_vector<float>({0.5f, -1.0f}, {2}), DType::BF16);
    h.requires_grad_();
    Tensor d = from_vector<double>({0.25, 2.0}, {2});
    d.requires_grad_();
    {
      ModeGuard guard(mode);
      const Tensor e = exp(h);  // computed in f32, rounded to bf16, as PyTorch's
      EXPECT_EQ(e.dtype(), DType::BF16);
      const Tensor both = concat({e, d}, 0);  // f64
      EXPECT_EQ(both.dtype(), DType::F64);
      sum(both * both).backward();
      mark_step();
    }
    ASSERT_EQ(h.grad().dtype(), DType::BF16);
    ASSERT_EQ(d.grad().dtype(), DType::F64);
    // PyTorch 1.13's gradients for the same program.
    EXPECT_EQ(h.grad().to_vector<float>(), (std::vector<float>{5.4375f, 0.26953125f}));
    EXPECT_EQ(d.grad().to_vector<double>(), (std::vector<double>{0.5, 4.0}));
  }
}
// --- autocast: its casts first, then promotion of what they give ----------------------------

TEST(PromotionAutocast, PromotionAppliesToTheCastOperands) {
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor w = from_vector<float>({0.5f, -1, 2, 0.25f}, {2, 2});
  const Tensor b64 = from_vector<double>({0.1, 0.2}, {2});
  const Tensor h = cast(x, DType::BF16);
  AutocastGuard autocast(DType::BF16);
  const Tensor y = matmul(x, w);  // bf16 GEMM, cast back to f32
  EXPECT_EQ(y.dtype(), DType::F32);
  EXPECT_EQ((y + b64).dtype(), DType::F64);
  EXPECT_EQ((h * 2.5).dtype(), DType::BF16);
  EXPECT_EQ((h + x).dtype(), DType::F32);
  EXPECT_EQ(matmul(h, w).dtype(), DType::F32);  // w cast to bf16, so no promotion is needed
  const std::vector<double> sum64 = (y + b64).to_vector<double>();
  const std::vector<float> yv = y.to_vector<float>();
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(sum64[i], static_cast<double>(yv[i]) + (i % 2 ? 0.2 : 0.1)) << i;
}

}  // namespace
}  // namespace lt
