// What every lazytrain program (tools, trainers, benchmarks) does the same way on its command
// line: --help, errors that say what is allowed, and one set of exit statuses.
#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>

namespace lt::cli {

/// The exit statuses of every program.
inline constexpr int kExitSuccess = 0;
inline constexpr int kExitFailure = 1;   ///< a failure while running (diverged, internal error)
inline constexpr int kExitBadInput = 2;  ///< bad usage or input: a flag, a setting, a file

/// Parses the command line with `app`, then runs `body`. --help prints the help and gives
/// kExitSuccess. A bad command line (any of CLI11's errors, whatever its own code) and an
/// lt::InputError print "<program>: error: <message>" on stderr and give kExitBadInput; any other
/// exception prints the same way and gives kExitFailure.
int run(CLI::App& app, int argc, char** argv, const std::function<void()>& body);

/// Checks whose message says what is allowed and what was given, e.g.
/// "--batch-size: expected an integer >= 1, got -5".
CLI::Validator integer_at_least(int64_t min);
CLI::Validator number_at_least(double min);

}  // namespace lt::cli
