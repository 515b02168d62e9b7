#include "passes/pass_log.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "ir/clock.h"
#include "ir/error.h"

namespace lt::passes {

void PassLog::verify(const ir::Graph& g) {
  const int64_t t0 = ir::now_ns();
  ir::verify(g);
  records_.push_back({"verify", ir::now_ns() - t0, false, static_cast<int64_t>(g.nodes().size())});
  dump("verify", StageKind::Graph, true, g, nullptr, nullptr);
}

bool PassLog::run(LoweredGraph& l, const PassEntry& stage, const LowerOptions& o) {
  LT_CHECK(stage.run != nullptr, "PassLog::run: '{}' is not a single stage", stage.name);
  const int64_t t0 = ir::now_ns();
  const bool changed = stage.run(l, o);
  return record(stage.name, stage.kind, t0, changed, l.graph, l.fusion ? &*l.fusion : nullptr,
                l.buffers ? &*l.buffers : nullptr, o.rules);
}

bool PassLog::run(ir::Graph& g, PassFn pass) {
  const PassEntry* e = find_pass(pass);
  LT_CHECK(e != nullptr, "PassLog::run: the pass is not in the registry");
  return run(e->name, g, pass);
}

bool PassLog::run(std::string_view name, ir::Graph& g,
                  const std::function<bool(ir::Graph&)>& pass) {
  const int64_t t0 = ir::now_ns();
  const bool changed = pass(g);
  return record(name, StageKind::Graph, t0, changed, g, nullptr, nullptr, nullptr);
}

bool PassLog::record(std::string_view name, StageKind kind, int64_t t0, bool changed,
                     const ir::Graph& g, const ir::FusionPlan* fusion,
                     const ir::BufferPlan* buffers, const ir::KernelRules* rules) {
  records_.push_back({std::string(name), ir::now_ns() - t0, changed,
                      static_cast<int64_t>(g.nodes().size())});
  if (opt_.verify) {
    try {
      ir::verify(g);
    } catch (const Error& e) {
      // The input was verified before the first stage, so a malformed graph is the stage's bug.
      throw InternalError(fmt::format("pass '{}' left a malformed graph: {}", name, e.what()));
    }
    // The plan verifiers throw InternalError themselves: a broken plan is a compiler bug. Plans
    // come only from stages, which the lowering options' rules (a backend's) made them under.
    if (fusion || buffers) {
      LT_CHECK(rules != nullptr, "pass '{}' made a plan under no backend's kernel rules", name);
      if (fusion) ir::verify_fusion_plan(g, *fusion, *rules);
      if (fusion && buffers) ir::verify_buffer_plan(g, *fusion, *buffers, *rules);
    }
  }
  dump(name, kind, changed, g, fusion, buffers);
  return changed;
}

int64_t PassLog::total_ns() const {
  int64_t t = 0;
  for (const PassRecord& r : records_) t += r.ns;
  return t;
}

bool PassLog::changed() const {
  for (const PassRecord& r : records_)
    if (r.changed) return true;
  return false;
}

void PassLog::dump(std::string_view name, StageKind kind, bool changed, const ir::Graph& g,
                   const ir::FusionPlan* fusion, const ir::BufferPlan* buffers) {
  if (opt_.dump_dir.empty()) return;
  std::filesystem::create_directories(opt_.dump_dir);
  const bool fusion_stage = kind == StageKind::Fusion || kind == StageKind::FusionEdit;
  const bool plan = fusion_stage || kind == StageKind::Buffers;
  const std::string path = fmt::format("{}/{}-{:02}-{}.{}", opt_.dump_dir, opt_.prefix,
                                       records_.size() - 1, name, plan ? "txt" : "ir");
  std::ofstream f(path);
  if (!f) throw Error(fmt::format("cannot write IR dump {}", path));
  if (fusion_stage) {
    f << ir::print_fusion_plan(g, *fusion);
  } else if (kind == StageKind::Buffers) {
    f << ir::print_memory_report(ir::memory_report(g, *buffers))
      << ir::print_buffer_plan(g, *buffers);
  } else {
    f << (changed ? ir::print(g) : "(unchanged)\n");
  }
}

}  // namespace lt::passes
