#include "frontend/optim/option_text.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>

namespace lt::optim {
namespace {

const std::string& find(const StringDict& text, const std::string& name) {
  const auto it = text.find(name);
  if (it == text.end()) throw Error(fmt::format("{} is missing", name));
  return it->second;
}

bool parse_number(std::string_view s, double& out) {
  const char* end = s.data() + s.size();
  const auto [ptr, err] = std::from_chars(s.data(), end, out);
  return err == std::errc() && ptr == end && std::isfinite(out);
}

}  // namespace

std::string number_text(double v) { return fmt::format("{}", v); }
std::string bool_text(bool v) { return v ? "true" : "false"; }

std::string numbers_text(const std::vector<double>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + number_text(v[i]);
  return out;
}

double read_number(const StringDict& text, const std::string& name) {
  const std::string& s = find(text, name);
  double v = 0;
  if (!parse_number(s, v)) throw Error(fmt::format("{} is \"{}\", not a finite number", name, s));
  return v;
}

bool read_bool(const StringDict& text, const std::string& name) {
  const std::string& s = find(text, name);
  if (s == "true") return true;
  if (s == "false") return false;
  throw Error(fmt::format("{} is \"{}\", not true or false", name, s));
}

std::vector<double> read_numbers(const StringDict& text, const std::string& name, size_t count) {
  const std::string& s = find(text, name);
  std::vector<double> out;
  for (size_t start = 0; !s.empty();) {
    const size_t comma = std::min(s.find(',', start), s.size());
    double v = 0;
    if (!parse_number(std::string_view(s).substr(start, comma - start), v))
      throw Error(fmt::format("{} is \"{}\", not comma-separated numbers", name, s));
    out.push_back(v);
    if (comma == s.size()) break;
    start = comma + 1;
  }
  if (count != 0 && out.size() != count)
    throw Error(fmt::format("{} is \"{}\": {} numbers, expected {}", name, s, out.size(), count));
  return out;
}

}  // namespace lt::optim
