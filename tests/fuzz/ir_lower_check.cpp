#include "tests/fuzz/ir_lower_check.h"

#include <fmt/format.h>

#include <exception>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "passes/pass_log.h"
#include "passes/registry.h"
#include "tests/fuzz/check_failure.h"

namespace lt::fuzz {
namespace {

/// Runs f; lt::Error becomes false (rejected), anything else a CheckFailure naming `stage`.
template <class F>
bool accepts(const char* stage, const std::string& context, F&& f) {
  try {
    f();
    return true;
  } catch (const Error&) {
    return false;
  } catch (const CheckFailure&) {
    throw;
  } catch (const InternalError& e) {
    throw CheckFailure(fmt::format("{}: internal error: {}\n{}", stage, e.what(), context));
  } catch (const std::exception& e) {
    throw CheckFailure(fmt::format("{}: unexpected exception: {}\n{}", stage, e.what(), context));
  }
}

/// The registry stages first, then the CPU backend's lowering; both plans verified (again:
/// PassLog verifies after every stage) and present.
passes::LoweredGraph lower(const ir::Graph& g, const LoweringRun& run) {
  const backends::Backend& backend = backends::cpu();
  passes::PassLog log({/*verify=*/true, "", "fuzz"});
  passes::LoweredGraph l{g, {}, {}};
  if (!run.stages_first.empty()) {
    log.verify(l.graph);
    backend.run_passes(l, run.stages_first, run.options, log);
  }
  l = backend.lower(std::move(l.graph), run.options, log);
  if (!l.fusion || !l.buffers) throw CheckFailure("the lowering returned without both plans");
  ir::verify_fusion_plan(l.graph, *l.fusion, backend.rules());
  ir::verify_buffer_plan(l.graph, *l.fusion, *l.buffers, backend.rules());
  return l;
}

}  // namespace

LoweringRun draw_lowering(InputRng& rng) {
  LoweringRun run;
  if (rng.coin(0.25)) {
    // Any registered stage but those that need a fusion plan, which may follow fuse.
    std::vector<std::string_view> names, after_fuse;
    for (const passes::PassEntry& p : passes::all_passes()) {
      const bool needs_plan =
          p.kind == passes::StageKind::Buffers || p.kind == passes::StageKind::FusionEdit;
      (needs_plan ? after_fuse : names).push_back(p.name);
    }
    auto pick = [&](const std::vector<std::string_view>& from) {
      return from[static_cast<size_t>(rng.range(0, static_cast<int64_t>(from.size()) - 1))];
    };
    for (int64_t i = rng.range(1, 4); i > 0; --i) {
      const std::string_view name = pick(names);
      run.stages_first.emplace_back(name);
      if (name == "fuse" && rng.coin(0.5)) run.stages_first.emplace_back(pick(after_fuse));
    }
  }
  passes::LowerOptions& o = run.options;
  o.simplify = !rng.coin(0.15);
  o.fusion.enabled = !rng.coin(0.1);
  o.fusion.epilogues = !rng.coin(0.2);
  if (rng.coin(0.2)) o.fusion.max_nodes_per_kernel = static_cast<int>(rng.range(1, 8));
  if (rng.coin(0.2)) o.fusion.max_reductions_per_kernel = static_cast<int>(rng.range(1, 3));
  o.buffers.donate = !rng.coin(0.15);
  o.buffers.in_place_loops = !rng.coin(0.2);
  return run;
}

std::optional<ir::Graph> parse_checked(std::string_view text) {
  std::optional<ir::Graph> g;
  if (!accepts("parse", "", [&] { g = ir::parse(text); })) return std::nullopt;
  if (!accepts("verify", "", [&] { ir::verify(*g); })) return std::nullopt;
  // The text form round-trips (docs/IR.md): parse(print(g)) prints and hashes the same.
  const std::string printed = ir::print(*g);
  std::optional<ir::Graph> again;
  if (!accepts("parse(print(g))", printed, [&] { again = ir::parse(printed); }))
    throw CheckFailure("parse(print(g)) rejects the printed graph:\n" + printed);
  if (ir::print(*again) != printed || ir::structural_hash(*again) != ir::structural_hash(*g))
    throw CheckFailure(fmt::format("print(parse(print(g))) differs from print(g):\n{}\nvs\n{}",
                                   ir::print(*again), printed));
  return g;
}

std::optional<passes::LoweredGraph> lower_checked(const ir::Graph& g, const LoweringRun& run) {
  std::optional<passes::LoweredGraph> out;
  if (!accepts("lowering", ir::print(g), [&] { out = lower(g, run); })) return std::nullopt;
  const ir::Graph& l = out->graph;
  bool same = l.results().size() == g.results().size() && l.params().size() == g.params().size();
  for (size_t i = 0; same && i < g.results().size(); ++i)
    same = l.type(l.results()[i]) == g.type(g.results()[i]);
  for (size_t i = 0; same && i < g.params().size(); ++i)
    same = l.params()[i].type == g.params()[i].type;
  if (!same)
    throw CheckFailure(fmt::format("lowering changed the parameters or results:\n{}\nbecame\n{}",
                                   ir::print(g), ir::print(l)));
  return out;
}

bool check_ir_lower(std::string_view text) {
  const std::optional<ir::Graph> g = parse_checked(text);
  if (!g) return false;
  InputRng rng(hash_input(text));
  return lower_checked(*g, draw_lowering(rng)).has_value();
}

}  // namespace lt::fuzz
