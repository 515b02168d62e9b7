#include "tests/fuzz/ir_compile_check.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "runtime/executable.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/check_failure.h"
#include "tests/fuzz/ir_lower_check.h"
#include "tests/fuzz/param_data.h"
#include "tests/fuzz/reference_spread.h"

namespace lt::fuzz {
namespace {

using BufferPtr = std::shared_ptr<rt::Buffer>;

bool within_budget(const ir::Graph& g) {
  if (static_cast<int>(g.nodes().size()) > kMaxCompiledNodes) return false;
  for (const ir::Param& p : g.params())
    if (p.type.numel() > kMaxCompiledElements) return false;
  for (const ir::Node& n : g.nodes())
    for (const TensorType& t : n.types)
      if (t.numel() > kMaxCompiledElements) return false;
  return true;
}

/// Runs f; an escaping exception is a CheckFailure naming `stage` (lt::Error too, unless
/// `error_ok`, when it returns false).
template <class F>
bool run_stage(const char* stage, const std::string& context, bool error_ok, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    if (error_ok) return false;
    throw CheckFailure(fmt::format("{}: lt::Error: {}\n{}", stage, e.what(), context));
  } catch (const CheckFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw CheckFailure(fmt::format("{}: {}\n{}", stage, e.what(), context));
  }
}

/// Runs exe on copies of the donated parameters, handed over for it to take (owned_refs 1).
std::vector<BufferPtr> run_donating(const rt::Executable& exe, const ir::Graph& g,
                                    const std::vector<BufferPtr>& params) {
  std::vector<BufferPtr> p = params;
  std::vector<long> owned(p.size(), 0);
  for (const ir::Donation& d : g.donations()) {
    p[d.param] = copy_of(*p[d.param]);
    owned[d.param] = 1;
  }
  return exe.run(p, owned);
}

}  // namespace

CompileOutcome check_ir_compile(std::string_view text) {
  const std::optional<ir::Graph> parsed = parse_checked(text);
  if (!parsed) return CompileOutcome::Rejected;
  const ir::Graph& g = *parsed;
  InputRng rng(hash_input(text));
  LoweringRun run = draw_lowering(rng);
  // wide_gemm_results has a bf16 GEMM whose readers only widen it write its f32 accumulator:
  // more precise than the graph by design, so the interpreter of the graph is no reference for it
  // (the random-graph test bounds it instead: tests/diff/README.md).
  run.options.wide_gemm_results = false;
  std::erase(run.stages_first, "wide_gemm_results");
  const std::optional<passes::LoweredGraph> l = lower_checked(g, run);
  if (!l) return CompileOutcome::Rejected;
  if (!within_budget(g) || !within_budget(l->graph)) return CompileOutcome::OverBudget;

  const std::string context = ir::print(g);
  std::shared_ptr<rt::Executable> exe;
  run_stage("codegen::compile", context, false, [&] { exe = backends::cpu().compile(*l, {}); });

  std::vector<BufferPtr> params, before;
  const bool specials = rng.coin(0.3);
  for (const ir::Param& p : g.params()) {
    params.push_back(random_buffer(p.type, rng, specials));
    before.push_back(copy_of(*params.back()));
  }
  ReferenceRun ref;
  const bool ref_ok =
      run_stage("reference", context, true, [&] { ref = run_reference(g, params, rng); });
  std::vector<BufferPtr> got, again;
  if (!ref_ok) {
    // Passes drop dead nodes, which may be the ones that reject the data: the compiled step
    // must then throw exactly when the interpreter throws on the lowered graph.
    const bool lowered_ok = run_stage("reference on the lowered graph", context, true,
                                      [&] { rt::InterpretedGraph(l->graph).run(params); });
    const bool compiled_ok = run_stage("compiled run", context, true,
                                       [&] { got = run_donating(*exe, g, params); });
    if (lowered_ok != compiled_ok)
      throw CheckFailure(fmt::format(
          "the interpreter {} on the lowered graph, the compiled step {}\n{}",
          lowered_ok ? "accepts the data" : "throws", compiled_ok ? "does not" : "throws",
          context));
    return compiled_ok ? CompileOutcome::Compared : CompileOutcome::DataError;
  }
  run_stage("compiled run", context, false, [&] {
    got = run_donating(*exe, g, params);
    again = run_donating(*exe, g, params);  // reuses the arena
  });
  for (size_t i = 0; i < g.results().size(); ++i) {
    const std::string d = compare_result(g, ref, i, *got[i]);
    if (!d.empty())
      throw CheckFailure(fmt::format("result {} ({}): {}\n{}", i,
                                     ir::value_name(g, g.results()[i]), d, context));
    if (got[i]->bytes() != again[i]->bytes() ||
        (got[i]->bytes() > 0 &&
         std::memcmp(got[i]->data(), again[i]->data(), got[i]->bytes()) != 0))
      throw CheckFailure(fmt::format("result {}: a second run differs from the first\n{}", i,
                                     context));
  }
  for (size_t p = 0; p < params.size(); ++p)
    if (params[p]->bytes() > 0 &&
        std::memcmp(params[p]->data(), before[p]->data(), params[p]->bytes()) != 0)
      throw CheckFailure(fmt::format("parameter %{} was written to\n{}", g.params()[p].name,
                                     context));
  return CompileOutcome::Compared;
}

}  // namespace lt::fuzz
