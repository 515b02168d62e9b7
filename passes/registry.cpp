#include "passes/registry.h"

#include "passes/dce.h"

namespace lt::passes {
namespace {

bool verify_pass(ir::Graph& g) {
  ir::verify(g);
  return false;
}

const PassEntry kPasses[] = {
    {"verify", verify_pass, "check operand counts, dtypes and shapes against each op's rule"},
    {"dce", dce, "drop nodes no result depends on"},
};

}  // namespace

std::span<const PassEntry> all_passes() { return kPasses; }

const PassEntry* find_pass(std::string_view name) {
  for (const PassEntry& p : kPasses)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace lt::passes
