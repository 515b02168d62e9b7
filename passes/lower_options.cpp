#include "passes/lower_options.h"

#include <string_view>

#include "ir/error.h"
#include "ir/hash.h"

namespace lt::passes {

const ir::KernelRules& kernel_rules(const LowerOptions& o) {
  LT_CHECK(o.rules != nullptr,
           "lowering options without kernel rules: lower through a backend (backends/backend.h)");
  return *o.rules;
}

LowerOptions at_opt_level(LowerOptions o, int level) {
  o.fusion.enabled = level >= 2;
  if (!o.fusion.enabled) o.fusion.epilogues = false;
  return o;
}

uint64_t options_key(const LowerOptions& o) {
  ir::Hasher h(0x6c6f7765726f7074ULL);
  h.add(o.rules ? o.rules->backend : std::string_view());
  h.add(o.simplify ? 1 : 0).add(o.channels_last ? 1 : 0).add(o.wide_gemm_results ? 1 : 0);
  const FuseOptions& f = o.fusion;
  h.add(f.enabled ? 1 : 0).add(f.epilogues ? 1 : 0);
  h.add(static_cast<uint64_t>(f.max_nodes_per_kernel));
  h.add(static_cast<uint64_t>(f.max_reductions_per_kernel));
  const BufferPlanOptions& b = o.buffers;
  h.add(b.donate ? 1 : 0).add(b.in_place_loops ? 1 : 0).add(b.alias_reshapes ? 1 : 0);
  h.add(b.alias_collectives ? 1 : 0);
  h.add(static_cast<uint64_t>(o.buckets.first_bytes)).add(static_cast<uint64_t>(o.buckets.bytes));
  return h.value();
}

}  // namespace lt::passes
