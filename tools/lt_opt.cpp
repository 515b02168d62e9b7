// lt-opt: reads IR text, runs the named passes in order, prints IR text. Used by the golden tests
// under tests/ir/ and by users who want to see what a pass does.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "passes/registry.h"

int main(int argc, char** argv) {
  CLI::App app{"lt-opt: run lazytrain IR passes"};
  std::string input = "-";
  std::string pass_list;
  bool list = false;
  app.add_option("input", input, "IR file ('-' for stdin)");
  app.add_option("--passes", pass_list, "comma-separated passes, run in order");
  app.add_flag("--list-passes", list, "print the pass names and exit");
  CLI11_PARSE(app, argc, argv);

  if (list) {
    for (const auto& p : lt::passes::all_passes()) std::cout << p.name << "  " << p.summary << "\n";
    return 0;
  }
  std::stringstream text;
  if (input == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream f(input);
    if (!f) {
      std::cerr << "error: cannot open " << input << "\n";
      return 1;
    }
    text << f.rdbuf();
  }
  try {
    lt::ir::Graph g = lt::ir::parse(text.str());
    std::stringstream names(pass_list);
    for (std::string name; std::getline(names, name, ',');) {
      if (name.empty()) continue;
      const auto* p = lt::passes::find_pass(name);
      if (!p) {
        std::cerr << "error: unknown pass '" << name << "' (see --list-passes)\n";
        return 1;
      }
      p->run(g);
    }
    std::cout << lt::ir::print(g);
  } catch (const lt::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
