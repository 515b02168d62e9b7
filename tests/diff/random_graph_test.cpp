// The random-graph differential test: seeded random DAGs, many per graph so one compile covers
// many, each run by the reference interpreter on the original graph and compiled (passes, fusion,
// LLVM loop kernels). Every result must agree within the error bound the generator derived for
// it: bit for bit where every op on the way is exactly rounded, NaN and inf at the same places,
// integers and bools exactly. tests/diff/README.md has the knobs:
// LT_RANDOM_GRAPHS=<count> for a longer run, LT_RANDOM_GRAPH_SEED=<n> to rerun one DAG.
#include "tests/support/random_graph.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <map>
#include <random>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/cpu/cpu_backend.h"
#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/loop_kernel.h"
#include "ir/parser.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"
#include "runtime/interpreter.h"

namespace lt {
namespace {

using testing::RandomGraph;
using testing::RandomResult;

constexpr int64_t kDefaultDags = 2000;
constexpr int64_t kDagsPerGraph = 32;
constexpr int kMaxReports = 8;  // failing DAGs printed in full; later ones are only counted
// The generator's error bounds are first-order estimates; this covers the second-order terms.
constexpr double kSafety = 4;

int64_t env_int(const char* name, int64_t fallback) {
  const char* s = std::getenv(name);
  return s && *s ? std::strtoll(s, nullptr, 10) : fallback;
}

/// The generator's options: defaults, or LT_RANDOM_GRAPH_MIN_OPS / _MAX_OPS.
testing::RandomDagOptions dag_options() {
  testing::RandomDagOptions o;
  o.min_ops = static_cast<int>(env_int("LT_RANDOM_GRAPH_MIN_OPS", o.min_ops));
  o.max_ops = std::max(o.min_ops, static_cast<int>(env_int("LT_RANDOM_GRAPH_MAX_OPS", o.max_ops)));
  return o;
}

struct Stats {
  std::map<std::string, int64_t> ops;  // nodes per op, for LT_RANDOM_GRAPH_VERBOSE
  int64_t graphs = 0, nodes = 0, results = 0, exact = 0, elements = 0, loop_kernels = 0;
  int64_t fused_views = 0, fused_reductions = 0;  // nodes of loop kernels (ir::LoopRole)
  double llvm_ms = 0;
  double worst_ratio = 0;  // largest |compiled - reference| / bound over inexact elements
  int reported = 0, failed_dags = 0;
};

/// A graph compiled at one opt level, or what stopped it.
struct Compiled {
  std::shared_ptr<rt::Executable> exe;
  std::string error;  // non-empty: the pipeline or the compiler threw this
  int loop_kernels = 0;
  int fused_views = 0, fused_reductions = 0;  // folded views and aliases; reductions
  double llvm_ms = 0;
};

/// Views and reductions the plan puts inside loop kernels.
void count_fused(const ir::Graph& g, const ir::FusionPlan& plan, Compiled& out) {
  for (const ir::FusionGroup& grp : plan.groups) {
    if (grp.kind != ir::KernelKind::Loop) continue;
    for (ir::LoopRole r : ir::loop_roles(g, grp.nodes)) {
      out.fused_views += r == ir::LoopRole::FoldedView || r == ir::LoopRole::Alias;
      out.fused_reductions += r == ir::LoopRole::Reduction;
    }
  }
}

/// g -> the CPU backend's lowering (verifying after every stage, as LT_VERIFY=1 does) -> its
/// compile.
Compiled compile_graph(const ir::Graph& g, int level) {
  Compiled out;
  try {
    passes::PassLog log({/*verify=*/true, "", "x"});
    passes::LowerOptions lo;
    lo.fusion.enabled = level >= 2;
    const passes::LoweredGraph l = backends::cpu().lower(g, lo, log);
    const ir::Graph& c = l.graph;
    LT_CHECK(c.results().size() == g.results().size(), "the pipeline changed the result count");
    for (size_t i = 0; i < g.results().size(); ++i)
      LT_CHECK(c.type(c.results()[i]) == g.type(g.results()[i]),
               "the pipeline changed result {}'s type", i);
    const ir::FusionPlan& plan = *l.fusion;
    count_fused(c, plan, out);
    codegen::CompileStats cs;
    out.exe = backends::cpu().compile(l, {}, &cs);  // no cache key: nothing on disk
    out.loop_kernels = cs.loop_kernels;
    out.llvm_ms = cs.llvm_ms;
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

std::string index_str(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = flat % s[d];
    flat /= s[d];
  }
  return fmt::format("[{}]", fmt::join(idx, ","));
}

/// Empty when `got` matches `ref` for a result of type t; else the first difference.
std::string compare(const TensorType& t, const rt::Buffer& ref, const rt::Buffer& got,
                    double max_error, Stats* st, const char* got_name = "compiled",
                    const char* ref_name = "reference") {
  if (ref.bytes() != got.bytes())
    return fmt::format("{} bytes vs {} bytes for {}", got.bytes(), ref.bytes(), type_str(t));
  const int64_t n = t.numel();
  const double tol = kSafety * max_error;
  int64_t bad = 0, first = -1;
  std::string first_what;
  for (int64_t i = 0; i < n; ++i) {
    std::string what;
    if (is_float(t.dtype)) {
      const double a = t.dtype == DType::F32 ? static_cast<const float*>(ref.data())[i]
                                             : static_cast<const double*>(ref.data())[i];
      const double b = t.dtype == DType::F32 ? static_cast<const float*>(got.data())[i]
                                             : static_cast<const double*>(got.data())[i];
      bool ok;
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
        ok = (std::isnan(a) && std::isnan(b)) || a == b;
      } else {
        ok = std::abs(a - b) <= tol;
        if (st && max_error > 0)
          st->worst_ratio = std::max(st->worst_ratio, std::abs(a - b) / max_error);
      }
      if (!ok)
        what = fmt::format("{} {:.17g} vs {} {:.17g} (|diff| {:.3g}, allowed {:.3g})", got_name, b,
                           ref_name, a, std::abs(a - b), tol);
    } else {
      const size_t w = dtype_size(t.dtype);
      int64_t a = 0, b = 0;  // little-endian: the low bytes hold the value
      std::memcpy(&a, static_cast<const char*>(ref.data()) + i * w, w);
      std::memcpy(&b, static_cast<const char*>(got.data()) + i * w, w);
      if (t.dtype == DType::I32) a = static_cast<int32_t>(a), b = static_cast<int32_t>(b);
      if (a != b) what = fmt::format("{} {} vs {} {}", got_name, b, ref_name, a);
    }
    if (!what.empty() && bad++ == 0) {
      first = i;
      first_what = what;
    }
  }
  if (st) st->elements += n;
  if (bad == 0) return "";
  return fmt::format("{} at {} (of {} elements, {} differ): {}", type_str(t),
                     index_str(t.shape, first), n, bad, first_what);
}

struct Difference {
  uint64_t dag_seed;
  std::string what;
};

/// The largest finite magnitude of a float result, at least 1 (tolerances scale with it).
double finite_scale(const TensorType& t, const rt::Buffer& b) {
  double scale = 1;
  for (int64_t k = 0; is_float(t.dtype) && k < t.numel(); ++k) {
    const double x = t.dtype == DType::F32 ? static_cast<const float*>(b.data())[k]
                                           : static_cast<const double*>(b.data())[k];
    if (std::isfinite(x)) scale = std::max(scale, std::abs(x));
  }
  return scale;
}

rt::BufferPtr copy_of(const rt::Buffer& b) {
  auto c = rt::Buffer::allocate(b.bytes());
  if (b.bytes() > 0) std::memcpy(c->data(), b.data(), b.bytes());  // empty buffers have no data
  return c;
}

/// Runs exe with copies of the donated parameters that it may take over (owned_refs 1).
std::vector<rt::BufferPtr> run_donating(const rt::Executable& exe, const ir::Graph& g,
                                        std::span<const rt::BufferPtr> params) {
  std::vector<rt::BufferPtr> p(params.begin(), params.end());
  std::vector<long> owned(p.size(), 0);
  for (const ir::Donation& d : g.donations()) {
    p[d.param] = copy_of(*p[d.param]);
    owned[d.param] = 1;
  }
  return exe.run(p, owned);
}

/// Runs the graph twice with the interpreter and twice compiled (the second run reuses the
/// executable's arena), with donated parameters handed over as copies the executable may take
/// (owned_refs 1). Compiled results must match the reference within their bounds, each second
/// run its first one exactly, and no parameter buffer may change. One Difference per mismatch.
/// Throws what the interpreter or the compiled code throws, or what stopped the compile.
std::vector<Difference> differences(const RandomGraph& rg, const Compiled& c, Stats* st) {
  if (!c.error.empty()) throw std::runtime_error(c.error);
  const ir::Graph& g = rg.graph();
  std::vector<rt::BufferPtr> before;
  for (const rt::BufferPtr& p : rg.params()) before.push_back(copy_of(*p));
  const rt::InterpretedGraph interpreter(g);
  const auto ref = interpreter.run(rg.params());
  const auto ref2 = interpreter.run(rg.params());
  const auto got = run_donating(*c.exe, g, rg.params());
  const auto got2 = run_donating(*c.exe, g, rg.params());  // reuses the arena
  std::vector<Difference> out;
  for (size_t i = 0; i < ref.size(); ++i) {
    const RandomResult& r = rg.results()[i];
    const TensorType& t = g.type(r.value);
    auto add = [&](const char* what, const std::string& d) {
      if (!d.empty())
        out.push_back(
            {r.dag_seed,
             fmt::format("result {} of the DAG ({}), error bound {:.3g}, {}: {}", r.index_in_dag,
                         ir::value_name(g, r.value), r.max_error, what, d)});
    };
    add("compiled vs reference", compare(t, *ref[i], *got[i], r.max_error, st));
    // Same inputs, same code: the same values (both runs hold NaN where either does).
    add("run twice", compare(t, *ref[i], *ref2[i], 0, nullptr, "reference run 2", "run 1"));
    add("run twice", compare(t, *got[i], *got2[i], 0, nullptr, "compiled run 2", "run 1"));
    if (st) {
      ++st->results;
      st->exact += r.max_error == 0;
    }
  }
  for (size_t p = 0; p < before.size(); ++p)
    if (before[p]->bytes() > 0 &&
        std::memcmp(before[p]->data(), rg.params()[p]->data(), before[p]->bytes()) != 0)
      out.push_back(
          {rg.param_seeds()[p], fmt::format("parameter %{} was written to", g.params()[p].name)});
  return out;
}

std::vector<Difference> differences(const RandomGraph& rg, int level) {
  return differences(rg, compile_graph(rg.graph(), level), nullptr);
}

/// The parameters as "// %name = [...]" lines: with the graph text, a file LT_RANDOM_GRAPH_IR runs.
std::string params_str(const RandomGraph& rg) {
  std::string s;
  const ir::Graph& g = rg.graph();
  for (size_t p = 0; p < g.params().size(); ++p)
    s += fmt::format("// %{} = {}\n", g.params()[p].name,
                     testing::buffer_str(g.params()[p].type, *rg.params()[p], INT64_MAX));
  return s;
}

/// A failure of DAG `seed` (found inside `pack`): rerun alone to tell whether it reproduces there,
/// and print the graph that shows it.
void report(uint64_t seed, int level, const std::string& what, const RandomGraph& pack, Stats& st) {
  ++st.failed_dags;
  if (st.reported++ >= kMaxReports) return;
  RandomGraph alone("seed" + std::to_string(seed));
  alone.add_dag(seed, dag_options());
  bool alone_fails = true;
  try {
    alone_fails = !differences(alone, level).empty();
  } catch (const std::exception&) {
  }
  const RandomGraph& shown = alone_fails ? alone : pack;
  ADD_FAILURE() << fmt::format(
      "DAG seed {} at opt level {}: {}\nRerun: LT_RANDOM_GRAPH_SEED={} ({})\n{}{}", seed, level,
      what, seed,
      alone_fails ? "fails alone too; its graph follows"
                  : "passes alone: it fails only next to the others; the whole graph follows",
      ir::print(shown.graph()), params_str(shown));
}

/// Checks one graph of DAGs at one opt level; failures name the DAG seeds.
void check(const RandomGraph& rg, const Compiled& c, int level, Stats& st) {
  ++st.graphs;
  st.nodes += static_cast<int64_t>(rg.graph().nodes().size());
  for (const ir::Node& n : rg.graph().nodes()) ++st.ops[std::string(ir::mnemonic(n.op))];
  st.loop_kernels += c.loop_kernels;
  st.fused_views += c.fused_views;
  st.fused_reductions += c.fused_reductions;
  st.llvm_ms += c.llvm_ms;
  std::vector<Difference> diffs;
  try {
    diffs = differences(rg, c, &st);
  } catch (const std::exception& e) {
    // Find the DAGs that throw on their own (or blame the whole graph).
    std::vector<uint64_t> seeds;
    for (const RandomResult& r : rg.results())
      if (seeds.empty() || seeds.back() != r.dag_seed) seeds.push_back(r.dag_seed);
    bool found = false;
    for (uint64_t s : seeds) {
      RandomGraph alone;
      alone.add_dag(s, dag_options());
      try {
        if (differences(alone, level).empty()) continue;
      } catch (const std::exception&) {
      }
      report(s, level, fmt::format("throws: {}", e.what()), alone, st);
      found = true;
    }
    if (!found)
      ADD_FAILURE() << "opt level " << level << ": " << e.what() << "\n" << ir::print(rg.graph());
    return;
  }
  std::set<uint64_t> seen;  // one report per DAG
  for (const Difference& d : diffs)
    if (seen.insert(d.dag_seed).second) report(d.dag_seed, level, d.what, rg, st);
}

/// Checks LT_RANDOM_GRAPHS DAGs from seed LT_RANDOM_GRAPH_FIRST on at one opt level,
/// LT_RANDOM_GRAPH_PACK to a graph. Graphs are drawn and compiled on worker threads (LLVM time
/// dominates), and run and compared on this one.
void run_many(int level) {
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t first_seed = env_int("LT_RANDOM_GRAPH_FIRST", 0);
  const int64_t count = first_seed + env_int("LT_RANDOM_GRAPHS", kDefaultDags);
  const int64_t per_graph = std::max<int64_t>(1, env_int("LT_RANDOM_GRAPH_PACK", kDagsPerGraph));
  const auto workers = static_cast<size_t>(std::max<int64_t>(
      1, env_int("LT_RANDOM_GRAPH_THREADS", std::max(1u, std::thread::hardware_concurrency()))));
  struct Prepared {
    std::unique_ptr<RandomGraph> rg;
    Compiled compiled;
    int64_t dags;
  };
  auto prepare = [level, count, per_graph](int64_t first) {
    auto rg = std::make_unique<RandomGraph>(fmt::format("dags{}", first));
    const int64_t last = std::min(count, first + per_graph);
    for (int64_t s = first; s < last; ++s) rg->add_dag(static_cast<uint64_t>(s), dag_options());
    Compiled c = compile_graph(rg->graph(), level);
    return Prepared{std::move(rg), std::move(c), last - first};
  };
  std::deque<std::future<Prepared>> queue;
  int64_t next = first_seed, dags = 0;
  auto refill = [&] {
    for (; queue.size() < workers && next < count; next += per_graph)
      queue.push_back(std::async(std::launch::async, prepare, next));
  };
  const bool verbose = env_int("LT_RANDOM_GRAPH_VERBOSE", 0) != 0;
  Stats st;
  for (refill(); !queue.empty(); refill()) {
    Prepared p = queue.front().get();
    queue.pop_front();
    refill();
    dags += p.dags;
    if (verbose)
      std::printf("[ random  ] graph @%s (%lld DAGs)\n", p.rg->graph().name().c_str(),
                  static_cast<long long>(p.dags));
    std::fflush(stdout);
    check(*p.rg, p.compiled, level, st);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[ random  ] opt level %d: %lld DAGs in %lld graphs, %lld nodes, %lld loop kernels (with "
      "%lld views and %lld reductions), %lld results (%lld exact, %lld elements), worst "
      "error/bound %.3g, %d failing DAGs, %.1f s (LLVM %.1f s on %zu threads)\n",
      level, static_cast<long long>(dags), static_cast<long long>(st.graphs),
      static_cast<long long>(st.nodes), static_cast<long long>(st.loop_kernels),
      static_cast<long long>(st.fused_views), static_cast<long long>(st.fused_reductions),
      static_cast<long long>(st.results), static_cast<long long>(st.exact),
      static_cast<long long>(st.elements), st.worst_ratio, st.failed_dags, secs, st.llvm_ms / 1000,
      workers);
  if (verbose) {
    std::string ops;
    for (const auto& [op, n] : st.ops) ops += fmt::format(" {} {}", op, n);
    std::printf("[ random  ] nodes per op:%s\n", ops.c_str());
  }
  EXPECT_EQ(st.failed_dags, 0);
  // The fused run must exercise views and reductions inside loop kernels (a few per hundred DAGs).
  if (level >= 2 && dags >= 200) {
    EXPECT_GT(st.fused_views, dags / 10);
    EXPECT_GT(st.fused_reductions, dags / 10);
  }
}

bool single_seed_mode() { return std::getenv("LT_RANDOM_GRAPH_SEED") != nullptr; }

TEST(RandomGraph, SameSeedSameDag) {
  RandomGraph a, b;
  a.add_dag(12345);
  b.add_dag(12345);
  EXPECT_EQ(ir::print(a.graph()), ir::print(b.graph()));
  ASSERT_EQ(a.params().size(), b.params().size());
  for (size_t i = 0; i < a.params().size(); ++i)
    if (a.params()[i]->bytes() > 0) {
      EXPECT_EQ(std::memcmp(a.params()[i]->data(), b.params()[i]->data(), a.params()[i]->bytes()), 0);
    }
}

TEST(RandomGraph, OneSeed) {
  if (!single_seed_mode()) GTEST_SKIP() << "set LT_RANDOM_GRAPH_SEED=<n> to rerun one DAG";
  const auto seed = static_cast<uint64_t>(env_int("LT_RANDOM_GRAPH_SEED", 0));
  RandomGraph rg("seed" + std::to_string(seed));
  rg.add_dag(seed, dag_options());
  std::printf("%s%s", ir::print(rg.graph()).c_str(), params_str(rg).c_str());
  for (const RandomResult& r : rg.results())
    std::printf("result %d %s: error bound %.3g\n", r.index_in_dag,
                ir::value_name(rg.graph(), r.value).c_str(), r.max_error);
  passes::PassLog log({/*verify=*/true, "", "x"});
  const passes::LoweredGraph l = backends::cpu().lower(rg.graph(), {}, log);
  std::printf("after the passes:\n%s\nfusion plan:\n%s\n", ir::print(l.graph).c_str(),
              ir::print_fusion_plan(l.graph, *l.fusion).c_str());
  for (int level : {2, 1}) {
    Stats st;
    check(rg, compile_graph(rg.graph(), level), level, st);
  }
}

// For minimizing a failure by hand: LT_RANDOM_GRAPH_IR=<file> runs the IR text in the file (with
// parameter data from "// %name = [...]" lines) both ways and prints every result.
TEST(RandomGraph, IrFile) {
  const char* path = std::getenv("LT_RANDOM_GRAPH_IR");
  if (!path) GTEST_SKIP() << "set LT_RANDOM_GRAPH_IR=<file> to run an IR file both ways";
  std::FILE* f = std::fopen(path, "r");
  ASSERT_TRUE(f) << path;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  std::fclose(f);
  const ir::Graph g = ir::parse(text);
  ir::verify(g);
  std::vector<rt::BufferPtr> params;
  for (const ir::Param& p : g.params()) {
    params.push_back(testing::buffer_from(p.type, testing::param_values(text, p.name)));
    std::printf("%%%s = %s\n", p.name.c_str(), testing::buffer_str(p.type, *params.back()).c_str());
  }
  const auto ref = rt::InterpretedGraph(g).run(params);
  for (int level : {2, 1}) {
    const Compiled c = compile_graph(g, level);
    ASSERT_TRUE(c.error.empty()) << c.error;
    const auto got = run_donating(*c.exe, g, params);
    for (size_t i = 0; i < ref.size(); ++i) {
      const TensorType& t = g.type(g.results()[i]);
      // No error bounds here: a few ulps of the largest magnitude (1e-5 f32, 1e-12 f64).
      const double scale = finite_scale(t, *ref[i]);
      const std::string d =
          compare(t, *ref[i], *got[i], (t.dtype == DType::F32 ? 2.5e-6 : 2.5e-13) * scale, nullptr);
      std::printf("result %zu %s\n  reference  %s\n  opt level %d %s\n%s", i, type_str(t).c_str(),
                  testing::buffer_str(t, *ref[i]).c_str(), level,
                  testing::buffer_str(t, *got[i]).c_str(),
                  d.empty() ? "" : ("  MISMATCH: " + d + "\n").c_str());
      if (!d.empty()) ADD_FAILURE() << "result " << i << " at opt level " << level << ": " << d;
    }
  }
}

// ---- Fused kernels: views folded into index maps, reductions at the end of loop kernels ----
// Hand-written graphs with shapes the random DAGs rarely reach (blocks of a bias gradient, long
// rows), run compiled at opt level 2 against the interpreter, with the launches they must take.

/// Distinct pseudo-random data in [-2, 2] (integers: -9..9; NaN and inf where asked).
rt::BufferPtr test_data(const TensorType& t, unsigned seed, bool specials = false) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<size_t>(std::max<int64_t>(1, t.numel())));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = is_float(t.dtype) ? std::uniform_real_distribution<double>(-2, 2)(rng)
                             : static_cast<double>(static_cast<int64_t>(rng() % 19) - 9);
    // Integers have no inf or NaN (converting them is undefined: UBSan float-cast-overflow).
    if (specials && is_float(t.dtype) && i % 7 == 3) v[i] = i % 2 ? INFINITY : NAN;
  }
  return testing::buffer_from(t, v);
}

/// Compiles `text` at opt level 2 and checks every result against the interpreter: integers and
/// bools exactly, floats within a few ulps of the largest magnitude (sums: of the row count).
/// Returns the launches (kernel names) for the caller to check what fused.
std::vector<std::string> expect_fused_matches(std::string_view text, bool specials = false) {
  const ir::Graph g = ir::parse(text);
  ir::verify(g);
  std::vector<rt::BufferPtr> params;
  for (size_t p = 0; p < g.params().size(); ++p)
    params.push_back(test_data(g.params()[p].type, static_cast<unsigned>(p + 1), specials));
  const auto ref = rt::InterpretedGraph(g).run(params);
  const Compiled c = compile_graph(g, 2);
  EXPECT_TRUE(c.error.empty()) << c.error;
  if (!c.error.empty()) return {};
  const auto got = run_donating(*c.exe, g, params);
  for (size_t i = 0; i < ref.size(); ++i) {
    const TensorType& t = g.type(g.results()[i]);
    const double scale = finite_scale(t, *ref[i]);
    const double ulps = t.dtype == DType::F32 ? 4e-6 : 4e-15;
    const std::string d = compare(t, *ref[i], *got[i], ulps * 64 * scale, nullptr);
    EXPECT_EQ(d, "") << "result " << i << "\n" << text;
  }
  std::vector<std::string> names;
  for (const rt::Launch& l : c.exe->launches())
    names.push_back(l.kind == rt::Launch::Kind::Loop ? "loop"
                    : !l.epilogue                     ? l.name
                    // "/block": an epilogue that runs on blocks smaller than the whole output
                    : l.epilogue->block_elems < l.epilogue->library_out.numel() ? l.name + "+loop/block"
                                                                                : l.name + "+loop");
  return names;
}

using ::testing::ElementsAre;

TEST(FusedKernels, PermuteSliceAndReshapeFoldIntoOneKernel) {
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[12,10], %y: f32[5,4], %z: f32[2,3,4]) {
      %0 = permute(%x) {perm=[1,0]} : f32[10,12]
      %1 = slice(%0) {start=[1,0], stop=[10,12], step=[2,3]} : f32[5,4]
      %2 = add(%1, %y) : f32[5,4]
      %3 = reshape(%z) {shape=[6,4]} : f32[6,4]
      %4 = slice(%3) {start=[1,0], stop=[6,4], step=[1,1]} : f32[5,4]
      %5 = mul(%2, %4) : f32[5,4]
      return %5
    })"),
              ElementsAre("loop"));
}

TEST(FusedKernels, PadAndConcatSelectBetweenPieces) {
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%a: f32[3,5], %b: f32[3,2], %c: f32[5,3], %y: f32[6,10]) {
      %0 = permute(%c) {perm=[1,0]} : f32[3,5]
      %1 = concat(%a, %b, %0) {axis=1} : f32[3,12]
      %2 = pad(%1) {lo=[2,0], hi=[1,0], value=0.5} : f32[6,12]
      %3 = slice(%2) {start=[0,1], stop=[6,11], step=[1,1]} : f32[6,10]
      %4 = exp(%3) : f32[6,10]
      %5 = add(%4, %y) : f32[6,10]
      return %5
    })"),
              ElementsAre("loop"));
  // Integers and bools: the pad value in the dtype, a bool concat feeding a where.
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%i: i64[4,3], %m: bool[2,6], %n: bool[2,1], %x: f64[3,7]) {
      %0 = pad(%i) {lo=[1,2], hi=[0,1], value=-3} : i64[5,6]
      %1 = full() {shape=[], dtype=i64, value=1} : i64[]
      %2 = add(%0, %1) : i64[5,6]
      %3 = concat(%m, %n) {axis=1} : bool[2,7]
      %4 = pad(%3) {lo=[1,0], hi=[0,0], value=1} : bool[3,7]
      %5 = neg(%x) : f64[3,7]
      %6 = where(%4, %x, %5) : f64[3,7]
      return %2, %6
    })"),
              ElementsAre("full", "loop", "loop"));
}

TEST(FusedKernels, ViewsOfComputedValuesFoldIntoTheConsumer) {
  // exp is written once; the transpose is folded into the kernel that reads it, not recomputed.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[6,9], %y: f32[9,6]) {
      %0 = exp(%x) : f32[6,9]
      %1 = permute(%0) {perm=[1,0]} : f32[9,6]
      %2 = add(%1, %y) : f32[9,6]
      %3 = reshape(%0) {shape=[54]} : f32[54]
      return %2, %3
    })"),
              ElementsAre("loop", "loop"));
}

TEST(FusedKernels, ReductionsWithAPrologue) {
  // Innermost axis reduced (row sums, vector accumulators), all axes, and max/min with NaN.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[37,301], %y: f32[301]) {
      %0 = mul(%x, %y) : f32[37,301]
      %1 = exp(%0) : f32[37,301]
      %2 = sum(%1) {axes=[1], keepdim=true} : f32[37,1]
      %3 = mean(%0) {axes=[], keepdim=false} : f32[]
      return %2, %3
    })"),
              ElementsAre("loop", "loop"));
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f64[5,4,7,6], %i: i32[9,40]) {
      %0 = neg(%x) : f64[5,4,7,6]
      %1 = max(%0) {axes=[0,2], keepdim=false} : f64[4,6]
      %2 = min(%x) {axes=[1,3], keepdim=true} : f64[5,1,7,1]
      %3 = abs(%i) : i32[9,40]
      %4 = sum(%3) {axes=[0], keepdim=false} : i32[40]
      %5 = max(%i) {axes=[1], keepdim=false} : i32[9]
      return %1, %2, %4, %5
    })",
                                   /*specials=*/true),
              ElementsAre("loop", "loop", "loop", "loop"));
}

TEST(FusedKernels, BiasGradientAccumulatesRowsInBlocks) {
  // sum over the batch of [128,512]: blocks of columns across threads, rows accumulated into
  // them; the reshape to [512] is the same buffer (an alias the kernel writes directly).
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%g: f32[128,512], %m: f32[128,512], %s: f32[6,50,40]) {
      %0 = mul(%g, %m) : f32[128,512]
      %1 = sum(%0) {axes=[0], keepdim=true} : f32[1,512]
      %2 = reshape(%1) {shape=[512]} : f32[512]
      %3 = mean(%s) {axes=[1], keepdim=false} : f32[6,40]
      %4 = max(%s) {axes=[0,1], keepdim=false} : f32[40]
      return %2, %3, %4
    })"),
              ElementsAre("loop", "loop", "loop"));
}

TEST(FusedKernels, ReductionsOfFoldedViewsAndSiblingReductions) {
  // sum(x) and sum(x * x) over the same axes share a kernel; a reduction reads a transpose.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[24,33], %w: f32[33,24]) {
      %0 = sum(%x) {axes=[1], keepdim=false} : f32[24]
      %1 = mul(%x, %x) : f32[24,33]
      %2 = sum(%1) {axes=[1], keepdim=false} : f32[24]
      %3 = permute(%w) {perm=[1,0]} : f32[24,33]
      %4 = sum(%3) {axes=[1], keepdim=true} : f32[24,1]
      return %0, %2, %4
    })"),
              ElementsAre("loop", "loop"));
}

TEST(FusedKernels, SoftmaxFromPrimitives) {
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[19,70]) {
      %0 = max(%x) {axes=[1], keepdim=true} : f32[19,1]
      %1 = sub(%x, %0) : f32[19,70]
      %2 = exp(%1) : f32[19,70]
      %3 = sum(%2) {axes=[1], keepdim=true} : f32[19,1]
      %4 = div(%2, %3) : f32[19,70]
      return %4
    })"),
              ElementsAre("loop", "loop", "loop"));
}

TEST(FusedKernels, InPlaceUpdateNextToAReduction) {
  // The momentum update writes over its donated buffer; the same kernel sums the gradient.
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%w: f32[64,48], %g: f32[64,48], %lr: f32[]) donate(%w: 0) {
      %0 = mul(%g, %lr) : f32[64,48]
      %1 = sub(%w, %0) : f32[64,48]
      %2 = sum(%g) {axes=[0], keepdim=false} : f32[48]
      return %1, %2
    })"),
              ElementsAre("loop"));
}

TEST(FusedKernels, AReductionNextToADonatedParameterOfItsBytes) {
  // %m (bool, 84 bytes) is donated to the f32 [3,7] sum: not over the buffer the kernel reads.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%m: bool[3,4,7], %x: f32[3,4,7]) donate(%m: 0) {
      %0 = cast(%m) {to=f32} : f32[3,4,7]
      %1 = exp(%0) : f32[3,4,7]
      %2 = mul(%1, %x) : f32[3,4,7]
      %3 = sum(%2) {axes=[1], keepdim=false} : f32[3,7]
      return %3, %1
    })"),
              ElementsAre("loop", "loop"));
}

// ---- Epilogues: loop kernels run on blocks of a matmul's or conv2d's output ----

TEST(FusedKernels, ConvEpilogueRunsImageByImage) {
  // Bias, relu and relu's backward mask on each image as its GEMM finishes; the convolution's
  // output lives in per-image scratch only (no launch writes it whole).
  const char* conv = R"(graph @f(%x: f32[5,4,9,9], %w: f32[6,4,3,3], %b: f32[6]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[5,6,9,9]
      %1 = reshape(%b) {shape=[1,6,1,1]} : f32[1,6,1,1]
      %2 = expand(%1) {shape=[5,6,9,9]} : f32[5,6,9,9]
      %3 = add(%0, %2) : f32[5,6,9,9]
      %4 = relu(%3) : f32[5,6,9,9]
      %5 = full() {shape=[], dtype=f32, value=0} : f32[]
      %6 = gt(%3, %5) : bool[5,6,9,9]
      return %4, %6
    })";
  EXPECT_THAT(expect_fused_matches(conv), ElementsAre("full", "conv2d+loop/block"));
  // f64, groups and strides; the epilogue also reads a full-size input (a residual).
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f64[3,4,10,10], %w: f64[6,2,3,3], %r: f64[3,6,5,5]) {
      %0 = conv2d(%x, %w) {stride=[2,2], padding=[1,1], dilation=[1,1], groups=2, grad_shape=[], channels_last=false} : f64[3,6,5,5]
      %1 = add(%0, %r) : f64[3,6,5,5]
      %2 = tanh(%1) : f64[3,6,5,5]
      return %2
    })"),
              ElementsAre("conv2d+loop/block"));
  // 16 channels: the lowering runs the convolution channels-last, and the bias and relu still
  // run image by image on its [N,H,W,C] output; the pool too runs channels-last, and a permute
  // gives its result NCHW.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[3,16,9,9], %w: f32[16,16,3,3], %b: f32[16]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[3,16,9,9]
      %1 = reshape(%b) {shape=[1,16,1,1]} : f32[1,16,1,1]
      %2 = expand(%1) {shape=[3,16,9,9]} : f32[3,16,9,9]
      %3 = add(%0, %2) : f32[3,16,9,9]
      %4 = relu(%3) : f32[3,16,9,9]
      %5 = max_pool2d(%4) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true} : f32[3,16,4,4]
      return %5
    })"),
              ElementsAre("permute", "conv2d+loop/block", "max_pool2d", "permute"));
  // One input channel into 32: the input goes channels-last as it is (a reshape, no launch), the
  // direct one-channel kernel hands each image to the epilogue, and the pool's gradient and the
  // weight gradient stay channels-last. The relu's gradient is the pool gradient's (through_relu),
  // so no loop applies it and the epilogue writes no mask.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[3,1,9,9], %w: f32[32,1,3,3], %b: f32[32], %gy: f32[3,32,4,4]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[3,32,9,9]
      %1 = reshape(%b) {shape=[1,32,1,1]} : f32[1,32,1,1]
      %2 = expand(%1) {shape=[3,32,9,9]} : f32[3,32,9,9]
      %3 = add(%0, %2) : f32[3,32,9,9]
      %4 = relu(%3) : f32[3,32,9,9]
      %5 = max_pool2d(%4) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true} : f32[3,32,4,4]
      %6 = max_pool2d_grad(%4, %gy) {kernel=[2,2], stride=[2,2], padding=[0,0], grad_shape=[], ceil_mode=false, count_include_pad=true} : f32[3,32,9,9]
      %7 = full() {shape=[], dtype=f32, value=0} : f32[]
      %8 = gt(%3, %7) : bool[3,32,9,9]
      %9 = where(%8, %6, %7) : f32[3,32,9,9]
      %10 = conv2d_weight_grad(%x, %9) {stride=[1,1], padding=[1,1], dilation=[1,1], groups=1, grad_shape=[32,1,3,3], channels_last=false} : f32[32,1,3,3]
      return %5, %10
    })"),
              ElementsAre("reshape", "conv2d+loop/block", "max_pool2d", "permute",
                          "max_pool2d_grad", "conv2d_weight_grad", "permute"));
}

TEST(FusedKernels, ConvEpilogueOnAnOutputReadElsewhereWritesItWhole) {
  // The conv output is also a result: it is written whole, and the epilogue reads it per image.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[4,3,6,6], %w: f32[5,3,3,3]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[0,0], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[4,5,4,4]
      %1 = exp(%0) : f32[4,5,4,4]
      return %1, %0
    })"),
              ElementsAre("conv2d+loop/block"));
  // One element per image: the loop's rows do not split by image (its only dim is the batch),
  // so the epilogue runs once over the whole output, which then needs a buffer of its own.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[7,2,3,3], %w: f32[1,2,3,3], %y: f32[7,1,1,1]) {
      %0 = conv2d(%x, %w) {stride=[1,1], padding=[0,0], dilation=[1,1], groups=1, grad_shape=[], channels_last=false} : f32[7,1,1,1]
      %1 = mul(%0, %y) : f32[7,1,1,1]
      return %1
    })"),
              ElementsAre("conv2d+loop"));
}

TEST(FusedKernels, MatMulEpilogues) {
  // Bias and tanh; a batched matmul with a residual.
  EXPECT_THAT(expect_fused_matches(R"(graph @f(%x: f32[37,20], %w: f32[33,20], %b: f32[33], %r: f32[3,4,6], %a: f32[3,4,5], %c: f32[5,6]) {
      %0 = matmul(%x, %w) {transpose_a=false, transpose_b=true} : f32[37,33]
      %1 = add(%0, %b) : f32[37,33]
      %2 = tanh(%1) : f32[37,33]
      %3 = matmul(%a, %c) {transpose_a=false, transpose_b=false} : f32[3,4,6]
      %4 = add(%3, %r) : f32[3,4,6]
      return %2, %4
    })"),
              ElementsAre("matmul+loop", "matmul+loop"));
  // The momentum update as the epilogue of the matmul making the weight gradient, written over
  // the donated weights and momentum.
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%w: f64[24,16], %m: f64[24,16], %x: f64[32,16], %g: f64[32,24], %lr: f64[]) donate(%w: 0, %m: 1) {
      %0 = matmul(%g, %x) {transpose_a=true, transpose_b=false} : f64[24,16]
      %1 = add(%m, %0) : f64[24,16]
      %2 = mul(%1, %lr) : f64[24,16]
      %3 = sub(%w, %2) : f64[24,16]
      return %3, %1
    })"),
              ElementsAre("matmul+loop"));
  // The update runs at its matmul's place, before the loop and matmul traced ahead of it.
  EXPECT_THAT(expect_fused_matches(
                  R"(graph @f(%x: f32[8,4], %g: f32[8,4], %w: f32[4,4], %lr: f32[], %h: f32[8,4], %v: f32[4,4]) donate(%w: 0) {
      %0 = matmul(%g, %x) {transpose_a=true, transpose_b=false} : f32[4,4]
      %1 = exp(%h) : f32[8,4]
      %2 = matmul(%1, %v) {transpose_a=false, transpose_b=false} : f32[8,4]
      %3 = mul(%0, %lr) : f32[4,4]
      %4 = sub(%w, %3) : f32[4,4]
      return %4, %2
    })"),
              ElementsAre("matmul+loop", "loop", "matmul"));
}

// Opt level 2: passes, fusion into LLVM loop kernels.
TEST(RandomGraph, FusedMatchesInterpreter) {
  if (single_seed_mode()) GTEST_SKIP();
  run_many(2);
}

// Opt level 1: passes, every node its own eager-kernel launch (no JIT, so cheap: every graph).
TEST(RandomGraph, UnfusedMatchesInterpreter) {
  if (single_seed_mode()) GTEST_SKIP();
  run_many(1);
}

}  // namespace
}  // namespace lt
