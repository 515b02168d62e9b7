// lt-opt: reads IR text, runs the named passes in order, prints IR text (and, with --print-fusion,
// the fusion plan). Used by the golden tests under tests/ir/ and by users who want to see what a
// pass does. Exit status 2 for a bad flag, an unreadable file, IR that does not parse or an
// unknown pass; 1 for any other failure.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/error.h"
#include "ir/fusion_plan.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "passes/fuse.h"
#include "passes/registry.h"
#include "tools/cli.h"

namespace {

// The plan after a header line, verified first so a golden test never checks a broken plan.
void print_fusion(const lt::ir::Graph& g, const lt::passes::FuseOptions& o) {
  lt::ir::verify(g);
  const lt::ir::FusionPlan plan = lt::passes::fuse(g, o);
  lt::ir::verify_fusion_plan(g, plan);
  size_t loops = 0, epilogues = 0;
  for (const auto& grp : plan.groups) {
    loops += grp.kind == lt::ir::KernelKind::Loop;
    epilogues += grp.kind == lt::ir::KernelKind::Epilogue;
  }
  std::cout << "fusion plan @" << g.name() << ": " << plan.groups.size() << " kernels (" << loops
            << " loop, " << epilogues << " epilogue, " << plan.groups.size() - loops - epilogues
            << " library)\n"
            << lt::ir::print_fusion_plan(g, plan);
}

lt::ir::Graph read_graph(const std::string& input) {
  std::stringstream text;
  if (input == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream f(input);
    if (!f) throw lt::InputError("cannot open " + input);
    text << f.rdbuf();
  }
  return lt::ir::parse(text.str());
}

void run_passes(lt::ir::Graph& g, const std::string& pass_list) {
  std::stringstream names(pass_list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name.empty()) continue;
    const auto* p = lt::passes::find_pass(name);
    if (!p) throw lt::InputError("unknown pass '" + name + "' (see --list-passes)");
    p->run(g);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lt-opt: run lazytrain IR passes"};
  std::string input = "-";
  std::string pass_list;
  bool list = false;
  bool fusion = false;
  lt::passes::FuseOptions fuse_options;
  app.add_option("input", input, "IR file ('-' for stdin)");
  app.add_option("--passes", pass_list, "comma-separated passes, run in order");
  app.add_flag("--list-passes", list, "print the pass names and exit");
  app.add_flag("--print-fusion", fusion, "after the passes, print the graph and its fusion plan");
  app.add_option("--fusion-max-nodes", fuse_options.max_nodes_per_kernel,
                 "largest loop kernel --print-fusion forms")
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--fusion-max-reductions", fuse_options.max_reductions_per_kernel,
                 "most reductions one loop kernel --print-fusion forms ends in")
      ->check(lt::cli::integer_at_least(1));
  app.add_flag("!--no-fusion", fuse_options.enabled, "--print-fusion prints the unfused plan");
  app.add_flag("!--no-epilogues", fuse_options.epilogues,
               "--print-fusion keeps loops after matmul/conv2d as kernels of their own");
  return lt::cli::run(app, argc, argv, [&] {
    if (list) {
      for (const auto& p : lt::passes::all_passes())
        std::cout << p.name << "  " << p.summary << "\n";
      return;
    }
    // lt::Error here means the input graph is malformed: it does not parse, or a pass's
    // verification refuses it.
    try {
      lt::ir::Graph g = read_graph(input);
      run_passes(g, pass_list);
      std::cout << lt::ir::print(g);
      if (fusion) print_fusion(g, fuse_options);
    } catch (const lt::InputError&) {
      throw;
    } catch (const lt::Error& e) {
      throw lt::InputError(e.what());
    }
  });
}
