#include "passes/pass_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "pass_test_util.h"
#include "passes/cse.h"
#include "passes/dce.h"

namespace lt::passes {
namespace {

using testing::parse_ok;
namespace fs = std::filesystem;

constexpr const char* kGraph = R"(
  graph @f(%x: f32[4]) {
    %0 = exp(%x) : f32[4]
    %1 = exp(%x) : f32[4]
    %2 = add(%0, %1) : f32[4]
    return %2
  })";

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(PassLog, TimesEachPassUnderItsRegistryName) {
  ir::Graph g = parse_ok(kGraph);
  PassLog log;
  log.verify(g);
  EXPECT_TRUE(log.run(g, cse));
  EXPECT_FALSE(log.run(g, dce));
  ASSERT_EQ(log.records().size(), 3u);
  EXPECT_EQ(log.records()[1].name, "cse");
  EXPECT_TRUE(log.records()[1].changed);
  EXPECT_EQ(log.records()[1].nodes, 2);
  EXPECT_FALSE(log.records()[2].changed);
  int64_t sum = 0;
  for (const PassRecord& r : log.records()) {
    EXPECT_GE(r.ns, 0);
    sum += r.ns;
  }
  EXPECT_EQ(log.total_ns(), sum);
  EXPECT_TRUE(log.changed());
}

TEST(PassLog, UnregisteredPassIsAnInternalError) {
  ir::Graph g = parse_ok(kGraph);
  PassLog log;
  EXPECT_THROW(log.run(g, +[](ir::Graph&) { return false; }), InternalError);
  EXPECT_FALSE(log.run("custom", g, [](ir::Graph&) { return false; }));
  EXPECT_EQ(log.records().back().name, "custom");
}

TEST(PassLog, VerifiesAfterEachPassWhenAsked) {
  // A pass that leaves a stored type the op's rule disagrees with.
  auto breaks_types = [](ir::Graph& g) {
    ir::Graph out(g.name());
    out.add_param(g.params()[0].type, g.params()[0].name);
    out.set_results({out.add_typed(ir::Op::Neg, {ir::Value::param(0)}, ir::NoAttrs{},
                                   {{DType::F32, {5}}})});
    g = std::move(out);
    return true;
  };
  ir::Graph g = parse_ok(kGraph);
  PassLog quiet;
  EXPECT_NO_THROW(quiet.run("broken", g, breaks_types));
  ir::Graph h = parse_ok(kGraph);
  PassLogOptions opt;
  opt.verify = true;
  PassLog checked(opt);
  EXPECT_THROW(checked.run("broken", h, breaks_types), InternalError);
}

TEST(PassLog, DumpsEachPassOrUnchanged) {
  const fs::path dir = fs::temp_directory_path() / ("lt_pass_log_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  ir::Graph g = parse_ok(kGraph);
  PassLogOptions opt;
  opt.dump_dir = dir.string();
  opt.prefix = "abc";
  PassLog log(opt);
  log.verify(g);
  log.run(g, cse);
  log.run(g, dce);
  EXPECT_EQ(read(dir / "abc-00-verify.ir"), ir::print(parse_ok(kGraph)));
  EXPECT_EQ(read(dir / "abc-01-cse.ir"), ir::print(g));
  EXPECT_EQ(read(dir / "abc-02-dce.ir"), "(unchanged)\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
  fs::remove_all(dir);
}

// A planning stage whose plan leaves a node out: verification catches it as the stage's bug.
bool broken_fusion(LoweredGraph& l, const LowerOptions&) {
  ir::FusionPlan plan = ir::unfused_plan(l.graph);
  plan.groups.pop_back();
  l.fusion = std::move(plan);
  return true;
}

TEST(PassLog, VerifiesThePlansAfterEachStageWhenAsked) {
  const PassEntry stage{"broken_fuse", StageKind::Fusion, broken_fusion, nullptr, ""};
  LoweredGraph quiet_graph{parse_ok(kGraph), {}, {}};
  const LowerOptions o = backends::cpu().options({});
  PassLog quiet;
  EXPECT_NO_THROW(quiet.run(quiet_graph, stage, o));
  LoweredGraph checked_graph{parse_ok(kGraph), {}, {}};
  PassLogOptions opt;
  opt.verify = true;
  PassLog checked(opt);
  try {
    checked.run(checked_graph, stage, o);
    FAIL() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("is in no kernel"), std::string::npos) << e.what();
  }
}

TEST(PassLog, DumpsPlansAsText) {
  const fs::path dir = fs::temp_directory_path() / ("lt_pass_log_plans_" + std::to_string(getpid()));
  fs::remove_all(dir);
  PassLogOptions opt;
  opt.dump_dir = dir.string();
  opt.prefix = "k";
  PassLog log(opt);
  LoweredGraph l{parse_ok(kGraph), {}, {}};
  const LowerOptions o = backends::cpu().options({});
  log.run(l, *find_pass("fuse"), o);
  log.run(l, *find_pass("buffer_plan"), o);
  EXPECT_EQ(read(dir / "k-00-fuse.txt"), ir::print_fusion_plan(l.graph, *l.fusion));
  EXPECT_EQ(read(dir / "k-01-buffer_plan.txt"),
            ir::print_memory_report(ir::memory_report(l.graph, *l.buffers)) +
                ir::print_buffer_plan(l.graph, *l.buffers));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lt::passes
