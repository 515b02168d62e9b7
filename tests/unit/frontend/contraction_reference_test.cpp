// einsum, diagonal, diag and trace against PyTorch 1.13: every case of
// tests/data/contraction_cases.json (made by contraction_cases.py) gives torch's result and
// torch's gradients of (result * cot).sum() in float64, or torch's error, eagerly and lazily.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using json = nlohmann::json;
using V = std::vector<double>;
using testing::error_of;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_CONTRACTION_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

Tensor tensor_of(const json& j) {
  return from_vector<double>(j["values"].get<V>(), j["shape"].get<Shape>());
}

Tensor call(const json& c, const std::vector<Tensor>& ops) {
  if (c.contains("equation")) return einsum(c["equation"].get<std::string>(), ops);
  const std::string kind = c["kind"];
  const std::vector<int64_t> a = c["args"].get<std::vector<int64_t>>();
  if (kind == "diagonal") return diagonal(ops[0], a[0], a[1], a[2]);
  if (kind == "diag") return diag(ops[0], a[0]);
  return trace(ops[0]);
}

void expect_close(const Tensor& got, const json& want) {
  ASSERT_EQ(got.shape(), want["shape"].get<Shape>());
  const V g = got.to_vector<double>(), w = want["values"].get<V>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-12 * std::max(1.0, std::abs(w[i]))) << "element " << i;
}

/// PyTorch's message as lazytrain gives it: "<op>: <torch's reason>". PyTorch writes einsum's
/// as "einsum(): ..." and one of them without the space before "has".
std::string expected_error(const json& c) {
  std::string e = c["error"];
  const std::string op = c.contains("equation") ? "einsum" : c["kind"].get<std::string>();
  if (e.starts_with("einsum(): ")) e = e.substr(10);
  if (size_t at = e.find("operand 1has"); at != std::string::npos) e.insert(at + 9, " ");
  return e.starts_with(op + ": ") ? e : op + ": " + e;
}

void check(const json& c, Mode mode) {
  SCOPED_TRACE(c["name"].get<std::string>() + (mode == Mode::Lazy ? " (lazy)" : " (eager)"));
  ModeGuard guard(mode);
  std::vector<Tensor> ops;
  for (const json& o : c["operands"]) {
    ops.push_back(tensor_of(o));
    ops.back().requires_grad_();
  }
  if (c.contains("error")) {
    const std::string m = error_of([&] { call(c, ops); });
    EXPECT_EQ(m.substr(0, m.find(" (operands: ")), expected_error(c));
    return;
  }
  const Tensor out = call(c, ops);
  sum(out * tensor_of(c["cot"])).backward();
  if (mode == Mode::Lazy) mark_step();
  expect_close(out, c["out"]);
  for (size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE("gradient of operand " + std::to_string(i));
    expect_close(ops[i].grad(), c["grads"][i]);
  }
}

TEST(ContractionReference, EveryCaseGivesPyTorchsValuesAndGradientsEagerly) {
  ASSERT_GT(cases().size(), 50u);
  for (const json& c : cases()) check(c, Mode::Eager);
}

TEST(ContractionReference, EveryCaseGivesPyTorchsValuesAndGradientsLazily) {
  for (const json& c : cases()) check(c, Mode::Lazy);
}

TEST(ContractionReference, EinsumPairsAreOneBatchedMatmul) {
  // Attention's scores: one matmul over the 4 (b, h) pairs, no elementwise product.
  ModeGuard lazy(Mode::Lazy);
  const Tensor q = randn({2, 2, 3, 4}, DType::F64), k = randn({2, 2, 5, 4}, DType::F64);
  const Tensor s = einsum("bhqd,bhkd->bhqk", {q, k});
  const std::string ir = debug::graph_text(std::vector<Tensor>{s});
  EXPECT_NE(ir.find("matmul"), std::string::npos) << ir;
  EXPECT_EQ(ir.find(" mul("), std::string::npos) << ir;
  mark_step();
}

}  // namespace
}  // namespace lt
