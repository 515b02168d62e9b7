// The library's settings. Each has an LT_* environment variable, read and validated once when
// the library starts (lt::init(), which the library calls before its first op), and may be
// overridden from code. README.md lists them with their defaults and effects.
#pragma once
#include <string>
#include <string_view>

namespace lt {

/// Reads every setting from the environment, once (later calls do nothing). A bad value throws
/// lt::InputError naming the variable, the value and what is allowed, e.g.
/// "LT_OPT_LEVEL=7 (from the environment): expected an integer from 0 to 2". Programs call it
/// first to fail before doing any work; the library calls it anyway.
void init();

/// Overrides a setting from code, validated like its variable: a bad value says "set in code",
/// or "set by <set_by>" (a command-line flag that carries it), where the variable's error says
/// "from the environment". `name` is the variable's name ("LT_OPT_LEVEL"); the value is given
/// as in the environment ("2", "1", a folder, "off").
void set_option(std::string_view name, std::string_view value, std::string_view set_by = {});

/// A setting's effective value, as set_option accepts it ("off" for a folder set to none).
std::string option(std::string_view name);

/// "lazytrain options", then one line per setting: its name, its value and where the value
/// came from (default, env or code). LT_DEBUG=1 prints it to stderr at start.
std::string options_report();

}  // namespace lt
