#include "tools/cli.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <optional>
#include <string>

#include "ir/error.h"

namespace lt::cli {
namespace {

std::string program_name(const char* argv0) {
  const std::string_view p = argv0 ? argv0 : "lazytrain";
  const size_t slash = p.rfind('/');
  return std::string(slash == std::string_view::npos ? p : p.substr(slash + 1));
}

std::optional<int64_t> parse_integer(const std::string& s) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

std::optional<double> parse_number(const std::string& s) {
  double v = 0;
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

}  // namespace

int run(CLI::App& app, int argc, char** argv, const std::function<void()>& body) {
  const std::string name = program_name(argc > 0 ? argv[0] : nullptr);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      app.exit(e);  // --help
      return kExitSuccess;
    }
    fmt::print(stderr, "{}: error: {}\nRun with --help for more information.\n", name, e.what());
    return kExitBadInput;
  }
  try {
    body();
    return kExitSuccess;
  } catch (const InputError& e) {
    fmt::print(stderr, "{}: error: {}\n", name, e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {  // lt::Error, lt::InternalError, ...
    fmt::print(stderr, "{}: error: {}\n", name, e.what());
    return kExitFailure;
  }
}

CLI::Validator integer_at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        const std::optional<int64_t> v = parse_integer(s);
        if (v && *v >= min) return "";
        return fmt::format("expected an integer >= {}, got {}", min, s);
      },
      fmt::format("at least {}", min));
}

CLI::Validator number_at_least(double min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        const std::optional<double> v = parse_number(s);
        if (v && *v >= min) return "";
        return fmt::format("expected a number >= {}, got {}", min, s);
      },
      fmt::format("at least {}", min));
}

}  // namespace lt::cli
