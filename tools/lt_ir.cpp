// lt-ir: turns an IR dump into Graphviz (.dot), and into SVG when Graphviz's `dot` is installed.
// Exit status 2 for a bad flag or an unreadable or malformed file; 1 when `dot` fails.
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/dot.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "tools/cli.h"

int main(int argc, char** argv) {
  CLI::App app{"lt-ir: render a lazytrain IR dump"};
  std::string input, output;
  bool svg = false;
  app.add_option("input", input, "IR file (an LT_DUMP_DIR *.ir file)")->required();
  app.add_option("-o,--output", output, "output file (default: input with .dot or .svg)");
  app.add_flag("--svg", svg, "render SVG with Graphviz's dot");
  return lt::cli::run(app, argc, argv, [&] {
    std::ifstream f(input);
    if (!f) throw lt::InputError("cannot open " + input);
    std::stringstream text;
    text << f.rdbuf();
    std::string dot;
    try {
      dot = lt::ir::to_dot(lt::ir::parse(text.str()));
    } catch (const lt::Error& e) {
      throw lt::InputError(input + ": " + e.what());
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
