// Views that write through, against PyTorch 1.13: every program of tests/data/view_cases.json
// (made by tests/data/view_cases.py, which holds the same programs in PyTorch) runs here by
// name, eagerly and lazily, and gives PyTorch's values or its error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "frontend/tensor_impl.h"
#include "frontend/views.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/error_of.h"

namespace lt {
namespace {

using json = nlohmann::json;
using Results = std::map<std::string, Tensor>;
using testing::error_of;

const json& cases() {
  static const json all = [] {
    std::ifstream f(LT_VIEW_CASES);
    return json::parse(f)["cases"];
  }();
  return all;
}

Tensor x0() { return reshape(arange(0, 12, 1, DType::F64), {3, 4}); }
Tensor w0() {
  Tensor w = clone(x0());
  w.requires_grad_();
  return w;
}
Tensor f64(std::vector<double> v, Shape s) { return from_vector<double>(v, std::move(s)); }
Tensor i64(std::vector<int64_t> v, Shape s) { return from_vector<int64_t>(v, std::move(s)); }

/// The programs of view_cases.py, line for line.
const std::map<std::string, std::function<Results()>>& programs() {
  static const std::map<std::string, std::function<Results()>> all = {
      {"slice_zero",
       [] {
         Tensor x = x0();
         slice(x, 0, 0, 2).zero_();
         return Results{{"x", x}};
       }},
      {"reshape_mul",
       [] {
         Tensor x = x0();
         reshape(x, {12}).mul_(2);
         return Results{{"x", x}};
       }},
      {"select_fill",
       [] {
         Tensor x = x0();
         select(x, 1, 2).fill_(7);
         return Results{{"x", x}};
       }},
      {"transpose_add",
       [] {
         Tensor x = x0();
         transpose(x, 0, 1).add_(reshape(arange(0, 12, 1, DType::F64), {4, 3}));
         return Results{{"x", x}};
       }},
      {"expand_clone",
       [] {
         Tensor x = x0();
         Tensor y = clone(expand(slice(x, 0, 0, 1), {3, 4}));
         y.zero_();
         return Results{{"x", x}, {"y", y}};
       }},
      {"chain_of_two",
       [] {
         Tensor x = x0();
         slice(transpose(x, 0, 1), 0, 1, 3).mul_(10);
         return Results{{"x", x}};
       }},
      {"slice_steps",
       [] {
         Tensor x = x0();
         slice(x, 1, 0, 4, 2).copy_(neg(ones({3, 2}, DType::F64)));
         slice(slice(x, 0, 0, 3, 2), 1, 1, 4, 2).add_(100);
         return Results{{"x", x}};
       }},
      {"base_write_seen",
       [] {
         Tensor x = x0();
         Tensor v = select(x, 0, 1);
         Tensor t = transpose(x, 0, 1);
         x.add_(100);
         return Results{{"v", v}, {"t", t}};
       }},
      {"siblings",
       [] {
         Tensor x = x0();
         Tensor a = slice(x, 0, 0, 2);
         Tensor b = slice(x, 0, 1, 3);
         a.fill_(5);
         return Results{{"b", b}, {"x", x}};
       }},
      {"chunk_unbind",
       [] {
         Tensor x = x0();
         std::vector<Tensor> c = chunk(x, 2, 1);
         c[1].zero_();
         std::vector<Tensor> rows = unbind(x, 0);
         rows[2].mul_(-1);
         std::vector<Tensor> parts = split(x, 1, 0);
         parts[0].add_(0.5);
         return Results{{"x", x}, {"c0", c[0]}};
       }},
      {"narrow_masked_fill",
       [] {
         Tensor x = x0();
         const Tensor mask = from_vector<bool>({true, false, false, true, true, true}, {3, 2});
         narrow(x, 1, 1, 2).masked_fill_(mask, -1);
         return Results{{"x", x}};
       }},
      {"flat_clamp",
       [] {
         Tensor x = x0();
         slice(view(x, {-1}), 0, 2, 9).clamp_(3, 6);
         return Results{{"x", x}};
       }},
      {"noncontiguous_reshape_copies",
       [] {
         Tensor x = x0();
         Tensor y = reshape(transpose(x, 0, 1), {12});
         y.zero_();
         Tensor z = flatten(transpose(x, 0, 1));
         z.add_(1);
         return Results{{"x", x}, {"y", y}, {"z", z}};
       }},
      {"view_error",
       [] {
         Tensor x = x0();
         view(transpose(x, 0, 1), {12});
         return Results{};
       }},
      {"contiguous_alias_or_copy",
       [] {
         Tensor x = x0();
         contiguous(x).add_(1);
         contiguous(transpose(x, 0, 1)).zero_();
         return Results{{"x", x}};
       }},
      {"detach_writes",
       [] {
         Tensor x = x0();
         x.detach().mul_(3);
         return Results{{"x", x}};
       }},
      {"index_ops_through_view",
       [] {
         Tensor x = x0();
         slice(x, 0, 1, 3).index_add_(1, i64({0, 3}, {2}), ones({2, 2}, DType::F64));
         select(x, 0, 0).scatter_(0, i64({1, 2}, {2}), f64({-5, -6}, {2}));
         return Results{{"x", x}};
       }},
      {"squeeze_unsqueeze",
       [] {
         Tensor x = x0();
         select(squeeze(unsqueeze(x, 0), 0), 0, 2).zero_();
         select(unsqueeze(x, 2), 0, 0).sub_(1);
         return Results{{"x", x}};
       }},
      {"permuted_3d",
       [] {
         Tensor z = reshape(arange(0, 24, 1, DType::F64), {2, 3, 4});
         select(slice(permute(z, {2, 0, 1}), 0, 1, 3), 2, 0).fill_(-1);
         reshape(transpose(z, 0, 1), {3, 8}).add_(1000);
         reshape(select(transpose(z, 1, 2), 0, 0), {12}).mul_(0);
         reshape(transpose(select(z, 0, 1), 0, 1), {12});
         return Results{{"z", z}};
       }},
      {"grad_through_view_write",
       [] {
         Tensor w = w0();
         Tensor x = w * 1;
         slice(x, 0, 0, 2).mul_(3);
         sum(x * x).backward();
         return Results{{"x", x}, {"grad", w.grad()}};
       }},
      {"grad_copy_into_view",
       [] {
         Tensor w = w0();
         Tensor x = w * 2;
         select(x, 0, 1).copy_(f64({1, 2, 3, 4}, {4}));
         sum(x * x).backward();
         return Results{{"x", x}, {"grad", w.grad()}};
       }},
      {"grad_view_of_written_base",
       [] {
         Tensor w = w0();
         Tensor x = w * 1;
         Tensor v = select(x, 1, 1);
         x.mul_(2);
         sum(v * v).backward();
         return Results{{"v", v}, {"grad", w.grad()}};
       }},
      {"grad_value_into_view",
       [] {
         Tensor w = w0();
         Tensor x = zeros({3, 4}, DType::F64);
         const Tensor part = slice(w, 0, 1, 3);
         slice(x, 0, 0, 2).copy_(part * part);
         sum(x).backward();
         return Results{{"x", x}, {"grad", w.grad()}};
       }},
      {"version_error_view_saved",
       [] {
         Tensor w = w0();
         Tensor x = w * 1;
         Tensor v = slice(x, 0, 0, 2);
         Tensor y = v * v;
         x.zero_();
         sum(y).backward();
         return Results{};
       }},
      {"version_error_result_saved",
       [] {
         Tensor w = w0();
         Tensor y = exp(w * 1);
         y.add_(1);
         sum(y).backward();
         return Results{};
       }},
      {"inplace_own_operand_fine",
       [] {
         Tensor w = w0();
         Tensor u = full({3, 4}, 0.5, DType::F64);
         u.requires_grad_();
         Tensor x = w * 1;
         x.mul_(u);
         Tensor b = x + 1;
         x.zero_();
         sum(b * b).backward();
         return Results{{"grad", w.grad()}, {"grad_u", u.grad()}};
       }},
      {"leaf_view_error",
       [] {
         Tensor w = w0();
         select(w, 0, 0).zero_();
         return Results{};
       }},
      {"expand_write_error",
       [] {
         Tensor x = x0();
         expand(slice(x, 0, 0, 1), {3, 4}).add_(1);
         return Results{};
       }},
      {"expand_without_repeats_writes",
       [] {
         Tensor x = x0();
         expand(select(x, 0, 1), {1, 4}).mul_(2);
         select(expand(slice(x, 0, 0, 1), {1, 1, 4}), 0, 0).sub_(1);
         return Results{{"x", x}};
       }},
      {"write_through_slice_of_expand",
       [] {
         Tensor x = x0();
         Tensor e = expand(slice(x, 0, 0, 1), {3, 4});
         slice(e, 0, 1, 2).add_(1);
         slice(expand(unsqueeze(select(x, 1, 0), 1), {3, 5}), 1, 2, 3).mul_(10);
         select(slice(transpose(expand(select(x, 0, 2), {2, 4}), 0, 1), 0, 1, 3), 1, 1).sub_(100);
         return Results{{"x", x}, {"e", e}};
       }},
      {"grad_through_slice_of_expand",
       [] {
         Tensor w = w0();
         Tensor x = w * 1;
         select(expand(slice(x, 0, 0, 1), {3, 4}), 0, 2).mul_(select(w, 0, 1) + 1);
         sum(x * x).backward();
         return Results{{"x", x}, {"grad", w.grad()}};
       }},
      {"diagonal_fill",
       [] {
         Tensor x = x0();
         diagonal(x).fill_(-1);
         diagonal(x, 1).add_(100);
         diagonal(transpose(x, 0, 1), -2).mul_(0);
         return Results{{"x", x}};
       }},
      {"diagonal_sees_base",
       [] {
         Tensor x = x0();
         Tensor d = diagonal(x, -1);
         select(x, 0, 2).zero_();
         Tensor z = reshape(arange(0, 24, 1, DType::F64), {2, 3, 4});
         Tensor e = diagonal(z, 0, 2, 0);
         e.sub_(1000);
         return Results{{"d", d}, {"z", z}, {"e", e}};
       }},
      {"grad_through_diagonal_write",
       [] {
         Tensor w = w0();
         Tensor x = w * 1;
         diagonal(x, 1).mul_(diagonal(w) + 1);
         sum(x * x).backward();
         return Results{{"x", x}, {"grad", w.grad()}};
       }},
  };
  return all;
}

/// The message without lazytrain's "<op>: " prefix and its " (operands: ...)" and " at file:line"
/// suffixes.
std::string reason(const std::string& m) {
  std::string r = m.substr(0, m.rfind(" at "));
  r = r.substr(0, r.find(" (operands: "));
  const size_t colon = r.find(": ");
  return colon == std::string::npos ? r : r.substr(colon + 2);
}

void check_case(const std::string& name, const json& expected, bool lazy) {
  SCOPED_TRACE(name + (lazy ? " (lazy)" : " (eager)"));
  const auto it = programs().find(name);
  ASSERT_NE(it, programs().end()) << "no program for " << name;
  std::optional<ModeGuard> mode;
  if (lazy) mode.emplace(Mode::Lazy);
  if (expected.contains("error")) {
    const std::string message = error_of([&] {
      it->second();
      if (lazy) mark_step();
    });
    const std::string want = expected["error"];
    if (name.starts_with("version_error")) {
      // PyTorch names the saved value's producer (AsStridedBackward0); lazytrain names the node
      // that saved it and where it was recorded.
      EXPECT_THAT(message, ::testing::StartsWith("backward: one of the variables needed for "
                                                 "gradient computation has been modified by an "
                                                 "inplace operation: ["));
      EXPECT_THAT(message, ::testing::HasSubstr("is at version 1; expected version 0 instead"));
      EXPECT_THAT(message, ::testing::HasSubstr(name.ends_with("view_saved")
                                                    ? "[f64[2,4]], which is input 1 of mul (at "
                                                    : "[f64[3,4]], which is output 0 of exp (at "));
    } else {
      EXPECT_EQ(reason(message), want);
    }
    return;
  }
  Results r = it->second();
  if (lazy) mark_step();
  for (const auto& [key, want] : expected.items()) {
    SCOPED_TRACE(key);
    ASSERT_TRUE(r.count(key));
    const Tensor& got = r.at(key);
    EXPECT_EQ(got.shape(), want["shape"].get<Shape>());
    EXPECT_EQ(got.to_vector<double>(), want["values"].get<std::vector<double>>());
  }
}

TEST(Views, EveryCaseGivesPyTorchsValuesEagerly) {
  ASSERT_EQ(cases().size(), programs().size());
  for (const auto& [name, expected] : cases().items()) check_case(name, expected, false);
}

TEST(Views, EveryCaseGivesPyTorchsValuesLazily) {
  for (const auto& [name, expected] : cases().items()) check_case(name, expected, true);
}

TEST(Views, LayoutsFollowPyTorch) {
  const Tensor x = x0();
  EXPECT_EQ(strides_of(*x.impl()), (Shape{4, 1}));
  const Tensor t = transpose(x, 0, 1);
  EXPECT_EQ(strides_of(*t.impl()), (Shape{1, 4}));
  const Tensor s = slice(slice(x, 1, 1, 4, 2), 0, 1, 3);
  EXPECT_EQ(strides_of(*s.impl()), (Shape{4, 2}));
  EXPECT_EQ(s.impl()->view->offset, 5);
  EXPECT_EQ(strides_of(*expand(slice(x, 0, 0, 1), {2, 3, 4}).impl()), (Shape{0, 0, 1}));
  // torch.arange(24.).reshape(2,3,4).permute(1,0,2).reshape(3,2,2,2).stride() == (4,12,2,1)
  const Tensor z = permute(reshape(arange(0, 24, 1, DType::F64), {2, 3, 4}), {1, 0, 2});
  EXPECT_EQ(strides_of(*reshape(z, {3, 2, 2, 2}).impl()), (Shape{4, 12, 2, 1}));
  EXPECT_FALSE(reshape(z, {3, 8}).impl()->view);  // PyTorch copies
  EXPECT_TRUE(is_contiguous({3, 1, 4}, {4, 99, 1}));
  EXPECT_FALSE(is_contiguous({4, 3}, {1, 4}));
  // x.diagonal(1): stride (5,), offset 1; x.diagonal(-1): offset 4;
  // torch.arange(24.).reshape(2,3,4).diagonal(0, 2, 0): stride (4, 13), offset 0
  EXPECT_EQ(strides_of(*diagonal(x, 1).impl()), (Shape{5}));
  EXPECT_EQ(diagonal(x, 1).impl()->view->offset, 1);
  EXPECT_EQ(diagonal(x, -1).impl()->view->offset, 4);
  const Tensor y = reshape(arange(0, 24, 1, DType::F64), {2, 3, 4});
  EXPECT_EQ(strides_of(*diagonal(y, 0, 2, 0).impl()), (Shape{4, 13}));
  EXPECT_EQ(strides_of(*diagonal(transpose(x, 0, 1), 1).impl()), (Shape{5}));
}

TEST(Views, VersionCountsWritesToTheBaseAndItsViews) {
  Tensor x = x0();
  Tensor v = slice(x, 0, 0, 1);
  EXPECT_EQ(x.version(), 0);
  v.zero_();
  x.add_(1);
  EXPECT_EQ(x.version(), 2);
  EXPECT_EQ(v.version(), 2);
}

// An optimizer that writes each parameter through a flat view of it still updates the
// parameter's buffer in place in lazy mode: the write-back is a reshape, which the step does
// not copy, and the stale view lets go of the old buffer.
TEST(Views, LazyWritesThroughViewsDonateTheBase) {
  const CompileOptions saved = compile_options();
  CompileOptions o = saved;
  o.opt_level = 2;
  set_compile_options(o);
  Tensor w = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor g = from_vector<float>({1, 1, 1, 2, 2, 2}, {2, 3});
  Tensor flat = view(w, {-1});  // held across steps, as a flat-buffer optimizer holds it
  ModeGuard lazy(Mode::Lazy);
  metrics::reset();
  std::vector<float> expect{1, 2, 3, 4, 5, 6};
  for (int step = 0; step < 3; ++step) {
    const void* before = w.impl()->data();
    {
      NoGradGuard no_grad;
      flat.sub_(view(g, {-1}) * 0.5);
      slice(w, 1, 0, 1).mul_(2);
    }
    mark_step();
    EXPECT_EQ(w.impl()->data(), before) << "step " << step;
    for (int i = 0; i < 6; ++i) expect[i] = (expect[i] - (i < 3 ? 0.5f : 1.0f)) * (i % 3 ? 1 : 2);
    EXPECT_EQ(w.to_vector<float>(), expect) << "step " << step;
    EXPECT_EQ(flat.to_vector<float>(), expect) << "step " << step;
  }
  EXPECT_EQ(metrics::counter("donations_refused"), 0);
  EXPECT_GE(metrics::counter("donations_taken"), 3);
  set_compile_options(saved);
}

}  // namespace
}  // namespace lt
