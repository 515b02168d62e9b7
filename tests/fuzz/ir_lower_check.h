// The check behind fuzz_ir_lower, and the first half of fuzz_ir_compile's: IR text is parsed and
// verified (either may reject it with lt::Error), its text form must round-trip, and the graph
// must lower: the pass pipeline, fusion and buffer planning, with both plans verified, the
// results' count and types kept. Anything else that goes wrong is a CheckFailure.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "passes/lowered_graph.h"
#include "tests/fuzz/input_rng.h"

namespace lt::fuzz {

/// How one input is lowered: registry stages run first (as lt-opt --passes=... would), then the
/// CPU backend's lowering with `options`.
struct LoweringRun {
  std::vector<std::string> stages_first;
  passes::LowerOptions options;
};

/// A run drawn from `rng`: mostly the defaults, sometimes fusion or epilogues off, small
/// kernels, no donation, no simplification, stages first.
LoweringRun draw_lowering(InputRng& rng);

/// The verified graph `text` holds, or nullopt when the parser or the verifier rejects it with
/// lt::Error. Throws CheckFailure when anything else escapes or print() does not round-trip.
std::optional<ir::Graph> parse_checked(std::string_view text);

/// g (verified) lowered by `run`, with both plans; nullopt when a stage rejects it with
/// lt::Error. Throws CheckFailure when anything else escapes, a plan fails its verifier, or the
/// parameters or the results' types change.
std::optional<passes::LoweredGraph> lower_checked(const ir::Graph& g, const LoweringRun& run);

/// fuzz_ir_lower's check of one input: true when it lowered, false when it was rejected.
bool check_ir_lower(std::string_view text);

}  // namespace lt::fuzz
