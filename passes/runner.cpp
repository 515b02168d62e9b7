#include "passes/runner.h"

#include <fmt/format.h>

#include <utility>

#include "ir/error.h"

namespace lt::passes {

bool run_stage(LoweredGraph& l, Stage s, const LowerOptions& o, PassLog& log) {
  return log.run(l, entry(s), o);
}

void run_passes(LoweredGraph& l, std::span<const std::string> names, const LowerOptions& o,
                PassLog& log, const Pipeline& pipeline) {
  for (const std::string& name : names) {
    const PassEntry* p = find_pass(name);
    if (!p) throw Error(fmt::format("unknown pass '{}' (see lt-opt --list-passes)", name));
    if (p->kind == StageKind::Pipeline) {
      l = pipeline(std::move(l.graph), o, log);
    } else {
      log.run(l, *p, o);
    }
  }
}

}  // namespace lt::passes
