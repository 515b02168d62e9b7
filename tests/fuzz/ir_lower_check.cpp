#include "tests/fuzz/ir_lower_check.h"

#include <fmt/format.h>

#include <exception>
#include <string>

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

/// The pass pipeline, fusion and buffer planning, each plan verified.
Lowered lower(const ir::Graph& g, const LowerOptions& o) {
  Lowered out{g, {}, {}};
  passes::PassLog log({/*verify=*/true, "", "fuzz"});
  if (o.extra_passes > 0) {
    InputRng rng(o.seed);
    const auto all = passes::all_passes();
    log.verify(out.graph);
    for (int i = 0; i < o.extra_passes; ++i) {
      const auto last = static_cast<int64_t>(all.size()) - 1;
      log.run(out.graph, all[static_cast<size_t>(rng.range(0, last))].run);
    }
  }
  passes::run_pipeline(out.graph, o.pipeline, log);
  out.fusion = passes::fuse(out.graph, o.fuse);
  ir::verify_fusion_plan(out.graph, out.fusion);
  out.buffers = passes::plan_buffers(out.graph, out.fusion, o.buffers);
  ir::verify_buffer_plan(out.graph, out.fusion, out.buffers);
  return out;
}

}  // namespace

LowerOptions draw_lower_options(InputRng& rng) {
  LowerOptions o;
  if (rng.coin(0.25)) o.extra_passes = static_cast<int>(rng.range(1, 4));
  o.seed = rng.next();
  o.pipeline.simplify = !rng.coin(0.15);
  o.fuse.enabled = !rng.coin(0.1);
  o.fuse.epilogues = !rng.coin(0.2);
  if (rng.coin(0.2)) o.fuse.max_nodes_per_kernel = static_cast<int>(rng.range(1, 8));
  if (rng.coin(0.2)) o.fuse.max_reductions_per_kernel = static_cast<int>(rng.range(1, 3));
  o.buffers.donate = !rng.coin(0.15);
  o.buffers.in_place_loops = !rng.coin(0.2);
  return o;
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

std::optional<Lowered> lower_checked(const ir::Graph& g, const LowerOptions& o) {
  std::optional<Lowered> out;
  if (!accepts("lowering", ir::print(g), [&] { out = lower(g, o); })) return std::nullopt;
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
  return lower_checked(*g, draw_lower_options(rng)).has_value();
}

}  // namespace lt::fuzz
