// What every backend call does the same way: the stages run under the backend's rules, whatever
// rules the caller's options held, and the backend's name keys what it compiles.
#include "backends/backend.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "passes/registry.h"
#include "tests/unit/passes/pass_test_util.h"

namespace lt::backends {
namespace {

using passes::testing::parse_ok;

constexpr const char* kGraph = R"(
  graph @f(%x: f32[4,8], %w: f32[8,8]) {
    %0 = matmul(%x, %w) {transpose_a=false, transpose_b=false} : f32[4,8]
    %1 = exp(%0) : f32[4,8]
    return %1
  })";

TEST(Backend, TheCpuIsNamedByItsRules) {
  EXPECT_EQ(cpu().name(), "cpu");
  EXPECT_EQ(&cpu(), &cpu());
  EXPECT_EQ(cpu().options({}).rules, &cpu().rules());
}

TEST(Backend, StagesRunUnderTheBackendsOwnRules) {
  // Rules of another backend in the caller's options do not reach the stages.
  ir::KernelRules other = cpu().rules();
  other.backend = "other";
  other.takes_epilogue = [](const ir::Graph&, int) { return false; };
  passes::LowerOptions o;
  o.rules = &other;
  passes::PassLog log;
  const passes::LoweredGraph l = cpu().lower(parse_ok(kGraph), o, log);
  EXPECT_EQ(ir::print_fusion_plan(l.graph, *l.fusion),
            "kernel 0 matmul+loop f32[4,8]: %0 %1 (in: %x, %w; out: %1)\n");
  EXPECT_EQ(ir::print_fusion_plan(l.graph, cpu().fusion_plan(l.graph, o)),
            ir::print_fusion_plan(l.graph, *l.fusion));
}

TEST(Backend, TheBackendsNameKeysItsSteps) {
  EXPECT_NE(passes::options_key(cpu().options({})), passes::options_key({}));
  ir::KernelRules renamed = cpu().rules();
  renamed.backend = "cpu2";
  passes::LowerOptions o;
  o.rules = &renamed;
  EXPECT_NE(passes::options_key(o), passes::options_key(cpu().options({})));
}

TEST(Backend, KernelStagesNeedABackendsRules) {
  passes::LoweredGraph l{parse_ok(kGraph), {}, {}};
  passes::PassLog log;
  try {
    log.run(l, passes::entry(passes::Stage::Fuse), {});
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("lower through a backend"), std::string::npos) << e.what();
  }
}

TEST(Backend, CompileNeedsBothPlans) {
  passes::LoweredGraph l{parse_ok(kGraph), {}, {}};
  passes::PassLog log;
  cpu().plan_kernels(l, {}, log);
  EXPECT_THROW(cpu().compile(l, {}), InternalError);
}

}  // namespace
}  // namespace lt::backends
