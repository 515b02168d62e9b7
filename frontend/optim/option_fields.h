// Walking an options struct's fields() (lt/optim_options.h), frontend-internal: its text for
// state_dict, that text read back, and each field's rule, in the order of fields().
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "frontend/optim/option_text.h"
#include "ir/error.h"
#include "lt/optim_options.h"

namespace lt::optim {

namespace detail {

inline std::string text_of(double v) { return number_text(v); }
inline std::string text_of(bool v) { return bool_text(v); }
template <size_t N>
std::string text_of(const std::array<double, N>& v) {
  return numbers_text(std::vector<double>(v.begin(), v.end()));
}

inline void read(const StringDict& text, const char* name, double& out) {
  out = read_number(text, name);
}
inline void read(const StringDict& text, const char* name, bool& out) {
  out = read_bool(text, name);
}
template <size_t N>
void read(const StringDict& text, const char* name, std::array<double, N>& out) {
  const std::vector<double> v = read_numbers(text, name, N);
  std::copy(v.begin(), v.end(), out.begin());
}

inline bool obeys(double v, Rule rule) {
  switch (rule) {
    case Rule::Any: return true;
    case Rule::NonNegative: return v >= 0;
    case Rule::Finite: return std::isfinite(v);
    case Rule::UnitInterval: return v >= 0 && v < 1;
  }
  return false;
}

inline const char* rule_text(Rule rule) {
  switch (rule) {
    case Rule::Any: return "anything";
    case Rule::NonNegative: return ">= 0";
    case Rule::Finite: return "finite";
    case Rule::UnitInterval: return "in [0, 1)";
  }
  return "";
}

/// A switch takes no rule but Any.
template <class O, class T>
constexpr bool fits(const Field<O, T>& f) {
  return !std::is_same_v<T, bool> || f.rule == Rule::Any;
}

template <class O, class T>
void check_field(const O& o, const Field<O, T>& f) {
  const T& v = o.*f.member;
  bool ok = true;
  if constexpr (std::is_same_v<T, double>) ok = obeys(v, f.rule);
  else if constexpr (!std::is_same_v<T, bool>)
    for (double x : v) ok = ok && obeys(x, f.rule);
  if (!ok) throw Error(fmt::format("{} must be {}, got {}", f.name, rule_text(f.rule), text_of(v)));
}

/// f(field) for each of Options' fields, in order.
template <class Options, class F>
void for_each_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, Options::fields());
}

}  // namespace detail

/// Each field's rule, in order; the first value outside its rule throws lt::Error
/// "<name> must be <what>, got <value>".
template <class Options>
void check_fields(const Options& o) {
  static_assert(
      std::apply([](const auto&... f) { return (detail::fits(f) && ...); }, Options::fields()),
      "a bool option's rule is Rule::Any");
  detail::for_each_field<Options>([&](const auto& f) { detail::check_field(o, f); });
}

/// Every field's text under its name.
template <class Options>
StringDict fields_text(const Options& o) {
  StringDict out;
  detail::for_each_field<Options>(
      [&](const auto& f) { out[f.name] = detail::text_of(o.*f.member); });
  return out;
}

/// The options `text` holds (its other entries are not looked at); a field it lacks keeps its
/// default where the field allows that (default_when_missing), else throws "<name> is missing".
/// Malformed text throws lt::Error naming the field. The values are not checked.
template <class Options>
Options fields_from_text(const StringDict& text) {
  Options o;
  detail::for_each_field<Options>([&](const auto& f) {
    if (f.required || text.contains(f.name)) detail::read(text, f.name, o.*f.member);
  });
  return o;
}

}  // namespace lt::optim
