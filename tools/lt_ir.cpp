// lt-ir: turns an IR dump into Graphviz (.dot), and into SVG when Graphviz's `dot` is installed.
// With --fusion it runs the fusion pass on the graph first and draws each kernel as a cluster.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/dot.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "passes/fuse.h"

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
  CLI11_PARSE(app, argc, argv);
  if (svg && output == "-") {
    std::cerr << "error: -o - writes the .dot text to stdout; --svg needs a file\n";
    return 1;
  }

  std::ifstream f(input);
  if (!f) {
    std::cerr << "error: cannot open " << input << "\n";
    return 1;
  }
  std::stringstream text;
  text << f.rdbuf();
  std::string dot;
  try {
    const lt::ir::Graph g = lt::ir::parse(text.str());
    if (fusion) {
      lt::ir::verify(g);  // the fuser relies on the stored types
      const lt::ir::FusionPlan plan = lt::passes::fuse(g);
      lt::ir::verify_fusion_plan(g, plan);
      dot = lt::ir::to_dot(g, plan);
    } else {
      dot = lt::ir::to_dot(g);
    }
  } catch (const lt::Error& e) {
    std::cerr << "error: " << input << ": " << e.what() << "\n";
    return 1;
  }
  if (output == "-") {
    std::cout << dot;
    return 0;
  }
  const std::string stem = input.substr(0, input.rfind('.'));
  const std::string dot_path = svg ? stem + ".dot" : (output.empty() ? stem + ".dot" : output);
  std::ofstream(dot_path) << dot;
  if (!svg) {
    std::cout << dot_path << "\n";
    return 0;
  }
  const std::string svg_path = output.empty() ? stem + ".svg" : output;
  const std::string cmd = "dot -Tsvg '" + dot_path + "' -o '" + svg_path + "'";
  if (std::system(cmd.c_str()) != 0) {
    std::cerr << "error: `" << cmd << "` failed (is graphviz installed?)\n";
    return 1;
  }
  std::cout << svg_path << "\n";
  return 0;
}
