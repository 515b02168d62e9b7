// For a front end whose callers' code cannot make a std::source_location (the Python package):
// every call it makes into the C++ API passes one fixed `site`, and a namer registered here
// names the caller (its file:line) wherever a location is put into text: error messages, sync
// reasons, the traced nodes' locations that recompile causes cite.
#pragma once
#include <functional>
#include <source_location>
#include <string>

namespace lt {

/// From now on location_str(site) is what `namer` returns, or location_str's own text of `site`
/// where `namer` returns an empty string. One namer: a second call replaces the first. Not
/// thread-safe against location_str: register before the calls that pass `site`.
void set_location_namer(const std::source_location& site, std::function<std::string()> namer);

}  // namespace lt
