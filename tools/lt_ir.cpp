// lt-ir: turns an IR dump into Graphviz (.dot), and into SVG when Graphviz's `dot` is installed.
// With --fusion it runs the CPU backend's kernel stages on the graph first (Backend::fusion_plan)
// and draws each kernel as a cluster.
// Exit status 2 for a bad flag or an unreadable or malformed file; 1 when `dot` fails.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "backends/cpu/cpu_backend.h"
#include "ir/dot.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"lt-ir: render a lazytrain IR dump"};
  std::string input, output;
  bool svg = false;
  bool fusion = false;
  app.add_option("input", input, "IR file (an LT_DUMP_DIR *.ir file)")->required();
  app.add_option("-o,--output", output,
                 "output file (default: input with .dot or .svg; '-': the .dot text on stdout)");
  app.add_flag("--svg", svg, "render SVG with Graphviz's dot");
  app.add_flag("--fusion", fusion, "fuse the graph and draw each kernel as a cluster");
  return lt::cli::run(app, argc, argv, [&] {
    if (svg && output == "-")
      throw lt::InputError("-o - writes the .dot text to stdout; --svg needs a file");
    std::ifstream f(input);
    if (!f) throw lt::InputError("cannot open " + input);
    std::stringstream text;
    text << f.rdbuf();
    std::string dot;
    try {
      const lt::ir::Graph g = lt::ir::parse(text.str());
      if (fusion) {
        lt::ir::verify(g);  // the fuser relies on the stored types
        const lt::backends::Backend& backend = lt::backends::cpu();
        const lt::ir::FusionPlan plan = backend.fusion_plan(g);
        lt::ir::verify_fusion_plan(g, plan, backend.rules());
        dot = lt::ir::to_dot(g, plan);
      } else {
        dot = lt::ir::to_dot(g);
      }
    } catch (const lt::Error& e) {
      throw lt::InputError(input + ": " + e.what());
    }
    if (output == "-") {
      std::cout << dot;
      return;
    }
    const std::string stem = input.substr(0, input.rfind('.'));
    const std::string dot_path = svg ? stem + ".dot" : (output.empty() ? stem + ".dot" : output);
    std::ofstream(dot_path) << dot;
    if (!svg) {
      std::cout << dot_path << "\n";
      return;
    }
    const std::string svg_path = output.empty() ? stem + ".svg" : output;
    const std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "'";
    if (std::system(cmd.c_str()) != 0)
      throw lt::Error("`" + cmd + "` failed (is graphviz installed?)");
    std::cout << svg_path << "\n";
  });
}
