// Errors. lt::Error is a user mistake (bad shape, dtype, argument), thrown where it is made and
// naming the op, the operands and the caller's file:line. InputError is the part of those that
// comes from outside the program (a setting, a flag, a file): programs exit with status 2 on it
// and 1 on any other error. InternalError is a broken invariant.
#pragma once
#include <fmt/format.h>

#include <source_location>
#include <stdexcept>
#include <string>

namespace lt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad setting (LT_* variable or its override in code), command-line flag or input file.
class InputError : public Error {
 public:
  using Error::Error;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// "file.cpp:12" with the directory part dropped for readability.
std::string location_str(const std::source_location& loc);

/// A type rule's complaint, without op or location: the caller adds those (see frontend apply).
class TypeError : public Error {
 public:
  using Error::Error;
};

}  // namespace lt

#define LT_CHECK(cond, ...)                                                              \
  do {                                                                                   \
    if (!(cond))                                                                         \
      throw ::lt::InternalError(fmt::format("internal error at {}:{}: {} ({})", __FILE__, \
                                            __LINE__, fmt::format(__VA_ARGS__), #cond)); \
  } while (0)

#define LT_UNREACHABLE() \
  throw ::lt::InternalError(fmt::format("unreachable at {}:{}", __FILE__, __LINE__))
