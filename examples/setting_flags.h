// The flags every trainer passes on to the library's settings (lt/options.h): --threads,
// --opt-level and --dump-ir. The library checks each like its variable, so a bad value reads
// "LT_OPT_LEVEL=7 (set by --opt-level): expected an integer from 0 to 2".
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "lt/options.h"

namespace lt::examples {

struct SettingFlags {
  std::string threads, opt_level, dump_dir;

  void add_to(CLI::App& app) {
    app.add_option("--threads", threads,
                   "Kernel threads (default: LT_NUM_THREADS, else every core)");
    app.add_option("--opt-level", opt_level,
                   "With --compiler-opt: 0 the reference interpreter, 1 passes and one kernel per "
                   "op, 2 fusion and compiled loops (default: LT_OPT_LEVEL, else 2)");
    app.add_option("--dump-ir", dump_dir,
                   "Write each prepared graph's IR, plans and LLVM IR into this folder "
                   "(default: LT_DUMP_DIR, else none)");
  }

  /// Reads the settings from the environment, then overrides those given on the command line.
  void apply() const {
    lt::init();
    if (!threads.empty()) lt::set_option("LT_NUM_THREADS", threads, "--threads");
    if (!opt_level.empty()) lt::set_option("LT_OPT_LEVEL", opt_level, "--opt-level");
    if (!dump_dir.empty()) lt::set_option("LT_DUMP_DIR", dump_dir, "--dump-ir");
  }
};

}  // namespace lt::examples
