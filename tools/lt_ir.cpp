// lt-ir: turns an IR dump into Graphviz (.dot), and into SVG when Graphviz's `dot` is installed.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/dot.h"
#include "ir/error.h"
#include "ir/parser.h"

int main(int argc, char** argv) {
  CLI::App app{"lt-ir: render a lazytrain IR dump"};
  std::string input, output;
  bool svg = false;
  app.add_option("input", input, "IR file (an LT_DUMP_DIR *.ir file)")->required();
  app.add_option("-o,--output", output, "output file (default: input with .dot or .svg)");
  app.add_flag("--svg", svg, "render SVG with Graphviz's dot");
  CLI11_PARSE(app, argc, argv);

  std::ifstream f(input);
  if (!f) {
    std::cerr << "error: cannot open " << input << "\n";
    return 1;
  }
  std::stringstream text;
  text << f.rdbuf();
  std::string dot;
  try {
    dot = lt::ir::to_dot(lt::ir::parse(text.str()));
  } catch (const lt::Error& e) {
    std::cerr << "error: " << input << ": " << e.what() << "\n";
    return 1;
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
