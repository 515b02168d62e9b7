// The process's settings: read from the environment once by lt::init(), overridable from code.
// Frontend-internal; users see lt/options.h. Numbers are atomics, so the hot path reads them
// without a lock; before init() they hold the table's defaults.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "frontend/options/table.h"

namespace lt::options {

namespace detail {
extern std::array<std::atomic<int64_t>, kSettingCount> g_numbers;
}  // namespace detail

/// An Integer or Switch setting's value (no init: callers run after lt::init()).
inline int64_t number(Setting s) {
  return detail::g_numbers[static_cast<int>(s)].load(std::memory_order_relaxed);
}
inline bool enabled(Setting s) { return number(s) != 0; }
/// A Folder or Path setting's value ("" for none).
std::string text(Setting s);

/// The value a setting has when nothing sets it, on this machine (after init()).
SettingValue default_value(Setting s);

/// Sets a validated value (init() first), and passes the runtime's settings down to it.
void set(Setting s, SettingValue v);
/// set() of a number given in code, validated like the variable: set_number(OptLevel, 7) throws
/// "LT_OPT_LEVEL=7 (set in code): expected an integer from 0 to 2".
void set_number(Setting s, int64_t n);

/// Whether OpenMPI's mpirun started this process (it sets OMPI_COMM_WORLD_SIZE and
/// OMPI_COMM_WORLD_RANK in every rank); lt::dist::init() then joins the MPI job. Not a
/// setting: the launcher's variables, read where the environment is read.
bool started_by_mpirun();

}  // namespace lt::options
