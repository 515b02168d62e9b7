#include "codegen/jit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "codegen/object_cache.h"
#include "ir/error.h"
#include "tests/unit/codegen/test_modules.h"

// Called by JIT code by name: found through the executable's dynamic symbol table
// (ENABLE_EXPORTS on the test binary).
extern "C" double lt_codegen_test_twice(double v) { return 2 * v; }

namespace lt::codegen {
namespace {

using testing::add_caller;
using testing::add_exp_loop;
using testing::add_saxpy;
using testing::MapFn;
using testing::SaxpyFn;
using testing::TestModule;
using testing::UnaryFn;

// Not exported (internal linkage): reachable only through define_symbol.
double thrice(double v) { return 3 * v; }

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_saxpy(SaxpyFn fn, int64_t n) {
  std::vector<float> x(n), y(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i) - 3;
    y[i] = std::sin(static_cast<float>(i));
    want[i] = 1.5f * x[i] + y[i];
  }
  fn(x.data(), y.data(), 1.5f, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(y[i], want[i]) << "i=" << i;
}

TEST(Jit, HostDescription) {
  EXPECT_FALSE(Jit::host_cpu().empty());
  EXPECT_NE(Jit::host_cpu(), "generic");
  EXPECT_NE(Jit::host_features().find("+sse2"), std::string::npos) << Jit::host_features();
  auto jit = Jit::create();
  EXPECT_NE(jit->target_triple().find("x86_64"), std::string::npos);
  EXPECT_FALSE(jit->data_layout().empty());
}

TEST(Jit, CompilesAndRunsSaxpy) {
  auto jit = Jit::create();
  TestModule tm(*jit);
  add_saxpy(*tm.m);
  tm.add_to(*jit);
  auto fn = reinterpret_cast<SaxpyFn>(jit->lookup("saxpy"));
  for (int64_t n : {0, 1, 7, 16, 1003, 4096}) check_saxpy(fn, n);
}

TEST(Jit, EveryOptLevelGivesTheSameResult) {
  for (int level = 0; level <= 3; ++level) {
    auto jit = Jit::create();
    TestModule tm(*jit);
    add_saxpy(*tm.m);
    JitOptions o;
    o.opt_level = level;
    tm.add_to(*jit, o);
    check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy")), 1003);
  }
}

TEST(Jit, CallsProcessAndLibmFunctions) {
  auto jit = Jit::create();
  TestModule tm(*jit);
  add_caller(*tm.m, "call_twice", "lt_codegen_test_twice");
  add_caller(*tm.m, "call_exp", "exp");
  tm.add_to(*jit);
  EXPECT_EQ(reinterpret_cast<UnaryFn>(jit->lookup("call_twice"))(4.0), 9.0);
  EXPECT_DOUBLE_EQ(reinterpret_cast<UnaryFn>(jit->lookup("call_exp"))(1.0), std::exp(1.0) + 1);
}

TEST(Jit, DefineSymbolReachesUnexportedFunctions) {
  auto jit = Jit::create();
  jit->define_symbol("lt_thrice", reinterpret_cast<const void*>(&thrice));
  EXPECT_THROW(jit->define_symbol("lt_thrice", reinterpret_cast<const void*>(&thrice)),
               InternalError);
  TestModule tm(*jit);
  add_caller(*tm.m, "call_thrice", "lt_thrice");
  tm.add_to(*jit);
  EXPECT_EQ(reinterpret_cast<UnaryFn>(jit->lookup("call_thrice"))(2.0), 7.0);
}

TEST(Jit, SeveralModulesInOneJit) {
  auto jit = Jit::create();
  TestModule a(*jit, "a"), b(*jit, "b");
  add_saxpy(*a.m, "saxpy_a");
  add_saxpy(*b.m, "saxpy_b");
  a.add_to(*jit);
  b.add_to(*jit);
  check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy_a")), 100);
  check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy_b")), 100);
}

TEST(Jit, ErrorsAreThrownAndLeaveTheJitUsable) {
  auto jit = Jit::create();
  EXPECT_THROW(jit->lookup("nothing_here"), InternalError);
  {
    TestModule tm(*jit);
    add_caller(*tm.m, "call_missing", "lt_no_such_function_anywhere");
    try {
      tm.add_to(*jit);
      ADD_FAILURE() << "an unresolved symbol must fail add_module";
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find("lt_no_such_function_anywhere"), std::string::npos)
          << e.what();
    }
  }
  {
    TestModule tm(*jit);
    add_saxpy(*tm.m);
    JitOptions o;
    o.opt_level = 7;
    EXPECT_THROW(tm.add_to(*jit, o), InternalError);
  }
  TestModule tm(*jit);
  add_saxpy(*tm.m);
  add_caller(*tm.m, "call_missing", "lt_codegen_test_twice");  // the failed name is free again
  tm.add_to(*jit);
  check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy")), 33);
}

TEST(Jit, WritesDumps) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lt_codegen_dump_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  auto jit = Jit::create();
  TestModule tm(*jit);
  add_saxpy(*tm.m);
  JitOptions o;
  o.dump_dir = (dir / "sub").string();
  o.dump_prefix = "k0";
  tm.add_to(*jit, o);
  check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy")), 100);
  const std::string ll = read_file(dir / "sub" / "k0.ll");
  const std::string opt = read_file(dir / "sub" / "k0.opt.ll");
  const std::string s = read_file(dir / "sub" / "k0.s");
  EXPECT_NE(ll.find("define void @saxpy"), std::string::npos);
  EXPECT_EQ(ll.find("vector.body"), std::string::npos);  // before optimization
  EXPECT_NE(opt.find("vector.body"), std::string::npos) << "the loop was not vectorized";
  EXPECT_NE(s.find("saxpy:"), std::string::npos);
  if (Jit::host_features().find("+avx512f") != std::string::npos) {
    EXPECT_NE(s.find("%zmm"), std::string::npos) << "expected 512-bit vectors";
  }
  std::filesystem::remove_all(dir);
}

// With libmvec the loop calls its 8-wide expf (a few ulp from glibc's scalar expf); without, the
// scalar expf, exactly.
TEST(Jit, VectorMathLibrary) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("lt_codegen_mvec_" + std::to_string(::getpid()));
  std::vector<float> x(1003), y(1003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -20 + 0.04f * static_cast<float>(i);
  for (bool vector_math : {true, false}) {
    SCOPED_TRACE(vector_math);
    auto jit = Jit::create();
    TestModule tm(*jit);
    add_exp_loop(*tm.m);
    JitOptions o;
    o.vector_math = vector_math;
    o.dump_dir = dir.string();
    o.dump_prefix = vector_math ? "on" : "off";
    tm.add_to(*jit, o);
    reinterpret_cast<MapFn>(jit->lookup("exp_loop"))(x.data(), y.data(), 1003);
    for (size_t i = 0; i < x.size(); ++i) {
      if (vector_math) {
        ASSERT_NEAR(y[i], std::exp(x[i]), 4e-7 * std::exp(x[i])) << x[i];
      } else {
        ASSERT_EQ(y[i], std::exp(x[i])) << x[i];
      }
    }
    const std::string opt = read_file(dir / (o.dump_prefix + ".opt.ll"));
    const bool mvec = opt.find("_ZGV") != std::string::npos;
    EXPECT_EQ(mvec, vector_math && std::filesystem::exists("/lib/x86_64-linux-gnu/libmvec.so.1"));
  }
  std::filesystem::remove_all(dir);
}

TEST(Jit, VectorWidthOption) {
  if (Jit::host_features().find("+avx512f") == std::string::npos) GTEST_SKIP() << "no AVX-512";
  const auto dir =
      std::filesystem::temp_directory_path() / ("lt_codegen_vw_" + std::to_string(::getpid()));
  auto jit = Jit::create();
  TestModule tm(*jit);
  add_saxpy(*tm.m);
  JitOptions o;
  o.dump_dir = dir.string();
  o.dump_prefix = "k";
  o.prefer_vector_width = 256;
  tm.add_to(*jit, o);
  check_saxpy(reinterpret_cast<SaxpyFn>(jit->lookup("saxpy")), 1003);
  const std::string s = read_file(dir / "k.s");
  EXPECT_EQ(s.find("%zmm"), std::string::npos);
  EXPECT_NE(s.find("%ymm"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace lt::codegen
