// Table-driven checks over every op in ir/ops/*.def, through lt::apply with the shared samples:
// the op runs in f64 and f32, the f32 result matches the f64 one, the types infer_types promises
// are the types the outputs have, and every row has each hook its columns call for.
#include <gtest/gtest.h>

#include <string>

#include "backends/cpu/cpu_backend.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/type_rules.h"
#include "lt/lazy.h"
#include "lt/lt.h"
#include "lt/metrics.h"
#include "tests/support/all_close.h"
#include "tests/support/op_samples.h"

namespace lt {
namespace {

using testing::OpSample;

std::vector<ir::Op> every_op() { return {ir::all_ops().begin(), ir::all_ops().end()}; }

/// out's dtype when the sample runs at f32 instead of f64.
DType narrowed(DType t) { return t == DType::F64 ? DType::F32 : t; }

void expect_types_inferred(const OpSample& s) {
  std::vector<TensorType> in;
  for (const Tensor& t : s.inputs) in.push_back(t.type());
  const TypeList want = ir::infer_types(s.op, in, s.attrs);
  const std::vector<Tensor> outs = testing::run_sample(s);
  ASSERT_EQ(outs.size(), want.size());
  for (size_t k = 0; k < outs.size(); ++k)
    EXPECT_EQ(type_str(outs[k].type()), type_str(want[k])) << "output " << k;
}

class OpTable : public ::testing::TestWithParam<ir::Op> {};

TEST_P(OpTable, InferTypesMatchOutputs) {
  for (const OpSample& s : testing::samples_for(GetParam())) {
    SCOPED_TRACE(s.label());
    expect_types_inferred(s);
    if (testing::takes_floats(s)) {
      SCOPED_TRACE("at f32");
      expect_types_inferred(testing::at_dtype(s, DType::F32));
    }
  }
}

TEST_P(OpTable, F32MatchesF64) {
  for (const OpSample& s : testing::samples_for(GetParam())) {
    SCOPED_TRACE(s.label());
    for (const Tensor& t : s.inputs)
      EXPECT_NE(t.dtype(), DType::F32) << "samples hold f64 floats; at_dtype makes the f32 ones";
    const std::vector<Tensor> wide = testing::run_sample(s);
    if (!testing::takes_floats(s)) continue;  // integer-only sample: nothing to narrow
    const std::vector<Tensor> narrow = testing::run_sample(testing::at_dtype(s, DType::F32));
    ASSERT_EQ(narrow.size(), wide.size());
    for (size_t k = 0; k < wide.size(); ++k) {
      SCOPED_TRACE("output " + std::to_string(k));
      EXPECT_EQ(narrow[k].dtype(), narrowed(wide[k].dtype()));
      const bool exact = !is_float(wide[k].dtype());  // bools, indices, truncated casts
      EXPECT_TRUE(
          testing::AllClose(narrow[k], wide[k], exact ? 0 : s.f32_atol, exact ? 0 : s.f32_rtol))
          << "f32 (actual) vs f64 (expected)";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Table, OpTable, ::testing::ValuesIn(every_op()),
                         [](const ::testing::TestParamInfo<ir::Op>& p) {
                           return std::string(ir::info(p.param).name);
                         });

TEST(OpTableCoverage, EveryOpHasSamples) {
  for (ir::Op op : ir::all_ops()) {
    const std::vector<OpSample> samples = testing::samples_for(op);
    EXPECT_FALSE(samples.empty()) << ir::mnemonic(op)
                                  << " has no sample in tests/support/op_samples*.cpp";
    for (const OpSample& s : samples) {
      EXPECT_EQ(s.op, op) << s.label();
      EXPECT_EQ(s.differentiable.size(), s.inputs.size()) << s.label();
    }
  }
}

TEST(OpTableCoverage, FloatOpsAreExercisedAtF32) {
  // Every op that can take or make floats has at least one sample that does.
  for (ir::Op op : ir::all_ops()) {
    if (ir::info(op).operands == ir::OperandKind::Integral) continue;  // integers and bool only
    bool any = false;
    for (const OpSample& s : testing::samples_for(op)) any = any || testing::takes_floats(s);
    EXPECT_TRUE(any) << ir::mnemonic(op);
  }
}

/// The sample and, where it takes floats, its f32 form.
std::vector<OpSample> both_dtypes(const std::vector<OpSample>& samples) {
  std::vector<OpSample> out;
  for (const OpSample& s : samples) {
    out.push_back(s);
    if (testing::takes_floats(s)) out.push_back(testing::at_dtype(s, DType::F32));
  }
  return out;
}

/// The sample's node alone in a graph, typed by the op's rule.
ir::Graph sample_graph(const OpSample& s) {
  ir::Graph g("sample");
  std::vector<ir::Value> in;
  for (const Tensor& t : s.inputs) in.push_back(g.add_param(t.type()));
  g.set_results({g.add(s.op, std::move(in), s.attrs)});
  return g;
}

/// Whether a compiled step runs the sample in a loop kernel, by the row's columns: loop form
/// Elementwise (the scalar emitter), or Reduction where the CPU's KernelRules::loop_reduction holds, on
/// compute dtypes only, and never an op that checks its data (its eager kernel throws on bad
/// data). A cast to the operand's own dtype is no op at all (canonicalize drops it).
bool runs_in_loop_kernel(const OpSample& s, const ir::Graph& g) {
  const ir::OpInfo& row = ir::info(s.op);
  const ir::Node& n = g.node(0);
  // bf16 is held in loop kernels where a cast reads or makes it (codegen::can_emit_loop).
  auto held = [&](DType t) {
    return is_compute_type(t) || (s.op == ir::Op::Cast && t == DType::BF16);
  };
  for (const Tensor& t : s.inputs)
    if (!held(t.dtype())) return false;
  if (!held(n.types[0].dtype) || ir::checks_data(s.op, n.types[0].dtype)) return false;
  switch (row.loop) {
    case ir::LoopForm::Elementwise:
      return !(row.result == ir::ResultKind::Attr && n.types[0] == g.type(n.inputs[0]));
    case ir::LoopForm::Reduction: return backends::cpu().rules().loop_reduction(g, 0);
    case ir::LoopForm::IndexMap:
    case ir::LoopForm::None: return false;
  }
  return false;
}

/// Loop kernels compiled for the sample's lazy run at opt level 2 (a fresh graph cache: compiled).
int64_t loop_kernels_compiled(const OpSample& s) {
  const CompileOptions saved = compile_options();
  CompileOptions o = saved;
  o.opt_level = 2;
  set_compile_options(o);
  clear_graph_cache();
  const int64_t before = metrics::counter("loop_kernels");
  {
    ModeGuard lazy(Mode::Lazy);
    std::vector<Tensor> outs = testing::run_sample(s);
    mark_step();
  }
  set_compile_options(saved);
  return metrics::counter("loop_kernels") - before;
}

/// Runs the sample with its differentiable inputs as leaves and backward from output 0 (when it
/// is a float); whether any of them got a gradient.
bool gives_a_gradient(const OpSample& s) {
  std::vector<Tensor> leaves;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    Tensor t = s.inputs[i];
    if (s.differentiable[i]) t = t.detach().requires_grad_();
    leaves.push_back(t);
  }
  const std::vector<Tensor> outs = testing::run_sample(s, leaves);
  if (!is_float(outs[0].dtype())) return false;
  outs[0].backward(ones_like(outs[0]));
  for (size_t i = 0; i < leaves.size(); ++i)
    if (s.differentiable[i] && leaves[i].grad().defined()) return true;
  return false;
}

// Each row has what its columns call for: samples; a shape rule (infer_types takes every sample,
// with the result column's dtype); an eager kernel (the sample runs); for loop form Elementwise
// and Reduction a scalar emitter or loop reduction (the sample compiles to a loop kernel); for
// grad Diff a gradient (some sample's input gets one), and for NoDiff no autograd history.
TEST(OpTableCoverage, EveryOpHasAllHooks) {
  for (ir::Op op : ir::all_ops()) {
    SCOPED_TRACE(std::string(ir::mnemonic(op)));
    const ir::OpInfo& row = ir::info(op);
    const std::vector<OpSample> samples = testing::samples_for(op);
    EXPECT_FALSE(samples.empty()) << "no samples in tests/support/op_samples_*.cpp";
    bool any_gradient = false;
    for (const OpSample& s : both_dtypes(samples)) {
      SCOPED_TRACE(s.label() + (s.inputs.empty() ? "" : " " + type_str(s.inputs[0].type())));
      ir::Graph g("sample");
      ASSERT_NO_THROW(g = sample_graph(s)) << "no shape rule takes it";
      const DType out = g.node(0).types[0].dtype;
      switch (row.result) {
        case ir::ResultKind::Same:
          EXPECT_EQ(out, s.inputs.at(ir::data_operand(op)).dtype()) << "result column Same";
          break;
        case ir::ResultKind::Bool: EXPECT_EQ(out, DType::Bool) << "result column Bool"; break;
        case ir::ResultKind::I64: EXPECT_EQ(out, DType::I64) << "result column I64"; break;
        case ir::ResultKind::Attr: break;
      }
      ASSERT_NO_THROW(testing::run_sample(s)) << "the eager kernel fails";
      EXPECT_EQ(loop_kernels_compiled(s), runs_in_loop_kernel(s, g) ? 1 : 0)
          << "loop column vs the compiled step (scalar emitter, loop reduction)";
      if (row.differentiable && s.any_differentiable())
        any_gradient = gives_a_gradient(s) || any_gradient;
      if (!row.differentiable) {
        std::vector<Tensor> leaves = s.inputs;
        for (Tensor& t : leaves)
          if (is_float(t.dtype())) t = t.detach().requires_grad_();
        for (const Tensor& y : testing::run_sample(s, leaves))
          EXPECT_FALSE(y.requires_grad()) << "grad column NoDiff, but the result has history";
      }
    }
    EXPECT_TRUE(!row.differentiable || any_gradient) << "grad column Diff, but no gradient";
  }
}

}  // namespace
}  // namespace lt
