// The check behind fuzz_ir_lower, and the first half of fuzz_ir_compile's: IR text is parsed and
// verified (either may reject it with lt::Error), its text form must round-trip, and the graph
// must lower: the pass pipeline, fusion and buffer planning, with both plans verified, the
// results' count and types kept. Anything else that goes wrong is a CheckFailure.
#pragma once
#include <optional>
#include <string_view>

#include "ir/buffer_plan.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"
#include "passes/pipeline.h"
#include "tests/fuzz/input_rng.h"

namespace lt::fuzz {

struct LowerOptions {
  int extra_passes = 0;  // registry passes run (in an order drawn from the seed) before lowering
  uint64_t seed = 0;
  passes::PipelineOptions pipeline;
  passes::FuseOptions fuse;
  passes::BufferPlanOptions buffers;
};

/// Options drawn from `rng`: mostly the defaults, sometimes fusion or epilogues off, small
/// kernels, no donation, no simplification, extra registry passes first.
LowerOptions draw_lower_options(InputRng& rng);

struct Lowered {
  ir::Graph graph;
  ir::FusionPlan fusion;
  ir::BufferPlan buffers;
};

/// The verified graph `text` holds, or nullopt when the parser or the verifier rejects it with
/// lt::Error. Throws CheckFailure when anything else escapes or print() does not round-trip.
std::optional<ir::Graph> parse_checked(std::string_view text);

/// g (verified) lowered with `o`; nullopt when a pass rejects it with lt::Error. Throws
/// CheckFailure when anything else escapes or a plan fails its verifier.
std::optional<Lowered> lower_checked(const ir::Graph& g, const LowerOptions& o);

/// fuzz_ir_lower's check of one input: true when it lowered, false when it was rejected.
bool check_ir_lower(std::string_view text);

}  // namespace lt::fuzz
