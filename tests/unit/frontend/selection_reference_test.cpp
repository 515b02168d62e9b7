// The ops whose result's shape depends on values, against PyTorch 1.13: every case of
// tests/data/selection_cases.json (made by selection_cases.py) gives torch's results, and
// torch's gradients where the op is differentiable, or torch's error, eagerly and lazily. In
// lazy mode only the values that decide the shape are computed early, as a counted sync.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using json = nlohmann::json;
using V = std::vector<double>;
using Args = std::vector<Tensor>;
using testing::error_of;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_SELECTION_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

Tensor tensor_of(const json& j) {
  const std::string dtype = j["dtype"];
  const Shape shape = j["shape"].get<Shape>();
  if (dtype == "float64") return from_vector<double>(j["values"].get<V>(), shape);
  if (dtype == "int64") return from_vector<int64_t>(j["values"].get<std::vector<int64_t>>(), shape);
  return from_vector<bool>(j["values"].get<std::vector<bool>>(), shape);
}

/// The programs of selection_cases.py, by name.
const std::map<std::string, std::function<Args(const Args&)>>& programs() {
  const auto one = [](auto f) { return [f](const Args& a) { return Args{f(a)}; }; };
  static const std::map<std::string, std::function<Args(const Args&)>> all = {
      {"nonzero_float", one([](const Args& a) { return nonzero(a[0]); })},
      {"nonzero_bool_3d", one([](const Args& a) { return nonzero(a[0]); })},
      {"nonzero_none", one([](const Args& a) { return nonzero(a[0]); })},
      {"nonzero_scalar", one([](const Args& a) { return nonzero(a[0]); })},
      {"masked_select", one([](const Args& a) { return masked_select(a[0], a[1]); })},
      {"masked_select_broadcast", one([](const Args& a) { return masked_select(a[0], a[1]); })},
      {"masked_select_none", one([](const Args& a) { return masked_select(a[0], a[1]); })},
      {"index_mask_full", one([](const Args& a) { return index(a[0], a[1]); })},
      {"index_mask_rows", one([](const Args& a) { return index(a[0], a[1]); })},
      {"index_mask_computed", one([](const Args& a) { return index(a[0], a[0] > 0); })},
      {"index_ints", one([](const Args& a) { return index(a[0], a[1]); })},
      {"index_ints_negative", one([](const Args& a) { return index(a[0], a[1]); })},
      {"index_ints_2d", one([](const Args& a) { return index(a[0], a[1]); })},
      {"index_put_mask", one([](const Args& a) { return index_put(a[0], a[1], a[2]); })},
      {"index_put_rows_broadcast", one([](const Args& a) { return index_put(a[0], a[1], a[2]); })},
      {"index_put_ints", one([](const Args& a) { return index_put(a[0], a[1], a[2]); })},
      {"index_put_accumulate",
       one([](const Args& a) { return index_put(a[0], a[1], a[2], true); })},
      {"unique_ints",
       [](const Args& a) {
         Unique u = unique(a[0], true, true, true);
         return Args{u.values, u.inverse, u.counts};
       }},
      {"unique_floats",
       [](const Args& a) {
         Unique u = unique(a[0], true, true, true);
         return Args{u.values, u.inverse, u.counts};
       }},
      {"unique_bool", one([](const Args& a) { return unique(a[0]).values; })},
      {"err_mask_shape", one([](const Args& a) { return index(a[0], a[1]); })},
      {"err_masked_select_dtype", one([](const Args& a) { return masked_select(a[0], a[1]); })},
      {"err_index_dtype", one([](const Args& a) { return index(a[0], a[1]); })},
      {"err_index_put_shape", one([](const Args& a) { return index_put(a[0], a[1], a[2]); })},
  };
  return all;
}

/// Where lazytrain's wording differs from torch's: it has no uint8 dtype, and takes int32
/// indices.
const std::map<std::string, std::string> kOwnWording = {
    {"err_masked_select_dtype", "expected BoolTensor for mask"},
    {"err_index_dtype", "tensors used as indices must be long, int or bool tensors"},
};

/// The message without lazytrain's "<op>: " prefix and its " (operands: ...)" and " at file:line"
/// suffixes.
std::string reason(const std::string& m) {
  std::string r = m.substr(0, m.rfind(" at "));
  r = r.substr(0, r.find(" (operands: "));
  const size_t colon = r.find(": ");
  return colon == std::string::npos ? r : r.substr(colon + 2);
}

void expect_equal(const Tensor& got, const json& want) {
  ASSERT_EQ(got.shape(), want["shape"].get<Shape>());
  EXPECT_EQ(got.dtype(), tensor_of(want).dtype());
  const V g = got.to_vector<double>(), w = tensor_of(want).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], w[i], 1e-12 * std::max(1.0, std::abs(w[i]))) << "element " << i;
}

void check(const std::string& name, const json& c, Mode mode) {
  SCOPED_TRACE(name + (mode == Mode::Lazy ? " (lazy)" : " (eager)"));
  const auto program = programs().find(name);
  ASSERT_NE(program, programs().end()) << "no program for " << name;
  ModeGuard guard(mode);
  Args in;
  for (const json& i : c["inputs"]) {
    in.push_back(tensor_of(i));
    if (in.back().dtype() == DType::F64 && !name.starts_with("unique") &&
        !name.starts_with("nonzero"))
      in.back().requires_grad_();
  }
  if (c.contains("error")) {
    const std::string m = error_of([&] { program->second(in); });
    const auto own = kOwnWording.find(name);
    EXPECT_EQ(reason(m), own != kOwnWording.end() ? own->second : c["error"].get<std::string>());
    return;
  }
  const Args out = program->second(in);
  if (c.contains("cot")) sum(out[0] * tensor_of(c["cot"])).backward();
  if (mode == Mode::Lazy) mark_step();
  ASSERT_EQ(out.size(), c["outs"].size());
  for (size_t i = 0; i < out.size(); ++i) expect_equal(out[i], c["outs"][i]);
  if (!c.contains("grads")) return;
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("gradient of input " + std::to_string(i));
    if (c["grads"][i].is_null()) continue;
    expect_equal(in[i].grad(), c["grads"][i]);
  }
}

TEST(SelectionReference, EveryCaseGivesPyTorchsValuesEagerly) {
  ASSERT_EQ(cases().size(), programs().size());
  for (const auto& [name, c] : cases().items()) check(name, c, Mode::Eager);
}

TEST(SelectionReference, EveryCaseGivesPyTorchsValuesLazily) {
  for (const auto& [name, c] : cases().items()) check(name, c, Mode::Lazy);
}

TEST(SelectionReference, LazyModeComputesOnlyTheMaskEarly) {
  // The mask's graph runs at the call (one sync, under the op's name); the selected values and
  // what follows stay pending until mark_step, in one graph with the parameter's update.
  ModeGuard lazy(Mode::Lazy);
  Tensor w = from_vector<double>({-1, 2, -3, 4, 5, -6}, {2, 3});
  w.requires_grad_();
  mark_step();
  metrics::reset();
  const Tensor y = w * 2;
  const Tensor picked = index(y, y > 0.0);
  EXPECT_EQ(metrics::counter("sync"), 1);
  EXPECT_TRUE(is_pending(picked));
  sum(picked * picked).backward();
  EXPECT_EQ(metrics::counter("sync"), 1);
  mark_step();
  EXPECT_EQ(w.grad().to_vector<double>(), (V{0, 16, 0, 32, 40, 0}));
  EXPECT_EQ(picked.to_vector<double>(), (V{4, 8, 10}));
}

TEST(SelectionReference, UniqueKeepsEveryNanApartAndLast) {
  // PyTorch 1.13's CPU unique leaves NaNs in sort-dependent places; lazytrain sorts them last,
  // each its own value (no NaN equals another), as numpy's sort order does.
  const double nan = std::nan("");
  const Unique u = unique(from_vector<double>({2, nan, 1, nan, 2}, {5}), true, true, true);
  const V v = u.values.to_vector<double>();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], 1);
  EXPECT_EQ(v[1], 2);
  EXPECT_TRUE(std::isnan(v[2]) && std::isnan(v[3]));
  EXPECT_EQ(u.inverse.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 0, 3, 1}));
  EXPECT_EQ(u.counts.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 1, 1}));
}

}  // namespace
}  // namespace lt
