#include "passes/pass_log.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "passes/registry.h"

namespace lt::passes {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void PassLog::verify(const ir::Graph& g) {
  const int64_t t0 = now_ns();
  ir::verify(g);
  records_.push_back({"verify", now_ns() - t0, false, static_cast<int64_t>(g.nodes().size())});
  dump(g, "verify", true);
}

bool PassLog::run(ir::Graph& g, bool (*pass)(ir::Graph&)) {
  const PassEntry* e = find_pass(pass);
  LT_CHECK(e != nullptr, "PassLog::run: the pass is not in the registry");
  return run(e->name, g, pass);
}

bool PassLog::run(std::string_view name, ir::Graph& g,
                  const std::function<bool(ir::Graph&)>& pass) {
  const int64_t t0 = now_ns();
  const bool changed = pass(g);
  records_.push_back({std::string(name), now_ns() - t0, changed,
                      static_cast<int64_t>(g.nodes().size())});
  if (opt_.verify) {
    try {
      ir::verify(g);
    } catch (const Error& e) {
      // The input was verified before the first pass, so a malformed graph is the pass's bug.
      throw InternalError(fmt::format("pass '{}' left a malformed graph: {}", name, e.what()));
    }
  }
  dump(g, name, changed);
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

void PassLog::dump(const ir::Graph& g, std::string_view name, bool changed) {
  if (opt_.dump_dir.empty()) return;
  std::filesystem::create_directories(opt_.dump_dir);
  const std::string path = fmt::format("{}/{}-{:02}-{}.ir", opt_.dump_dir, opt_.prefix,
                                       records_.size() - 1, name);
  std::ofstream f(path);
  if (!f) throw Error(fmt::format("cannot write IR dump {}", path));
  f << (changed ? ir::print(g) : "(unchanged)\n");
}

}  // namespace lt::passes
