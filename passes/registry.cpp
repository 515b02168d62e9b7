#include "passes/registry.h"

#include "passes/canonicalize.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/fold.h"
#include "passes/pipeline.h"

namespace lt::passes {
namespace {

bool verify_pass(ir::Graph& g) {
  ir::verify(g);
  return false;
}

const PassEntry kPasses[] = {
    {"verify", verify_pass, "check operand counts, dtypes and shapes against each op's rule"},
    {"canonicalize", canonicalize, "local algebraic identities (x*1, reshape of reshape, ...)"},
    {"fold", fold, "compute elementwise ops and views of full constants"},
    {"cse", cse, "merge nodes with equal op, attributes and inputs"},
    {"dce", dce, "drop nodes no result depends on"},
    {"pipeline", run_default_pipeline, "the compile pipeline, in order, verifying each pass"},
};

}  // namespace

std::span<const PassEntry> all_passes() { return kPasses; }

const PassEntry* find_pass(std::string_view name) {
  for (const PassEntry& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

const PassEntry* find_pass(PassFn fn) {
  for (const PassEntry& p : kPasses)
    if (p.run == fn) return &p;
  return nullptr;
}

}  // namespace lt::passes
