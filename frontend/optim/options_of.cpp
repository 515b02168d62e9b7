// OptimizerOf's options as text and their checks, made by walking Options::fields(): state_dict
// writes every field under its name, load_state_dict reads every one back (a missing or
// malformed one throws), and each field's rule checks its value, in the order of fields().
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <vector>

#include "frontend/optim/option_text.h"
#include "lt/optim.h"

namespace lt::optim {
namespace {

std::string text_of(double v) { return number_text(v); }
std::string text_of(bool v) { return bool_text(v); }
template <size_t N>
std::string text_of(const std::array<double, N>& v) {
  return numbers_text(std::vector<double>(v.begin(), v.end()));
}

void read(const StringDict& text, const char* name, double& out) { out = read_number(text, name); }
void read(const StringDict& text, const char* name, bool& out) { out = read_bool(text, name); }
template <size_t N>
void read(const StringDict& text, const char* name, std::array<double, N>& out) {
  const std::vector<double> v = read_numbers(text, name, N);
  std::copy(v.begin(), v.end(), out.begin());
}

bool obeys(double v, Rule rule) {
  switch (rule) {
    case Rule::Any: return true;
    case Rule::NonNegative: return v >= 0;
    case Rule::Finite: return std::isfinite(v);
    case Rule::UnitInterval: return v >= 0 && v < 1;
  }
  return false;
}

const char* rule_text(Rule rule) {
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

}  // namespace

template <class Options>
void OptimizerOf<Options>::check(const Options& o) const {
  static_assert(std::apply([](const auto&... f) { return (fits(f) && ...); }, Options::fields()),
                "a bool option's rule is Rule::Any");
  for_each_field<Options>([&](const auto& f) { check_field(o, f); });
  check_together(o);
}

template <class Options>
void OptimizerOf<Options>::check_options(size_t group) const {
  check(options_[group]);
}

template <class Options>
StringDict OptimizerOf<Options>::options_text(size_t group) const {
  const Options& o = options_[group];
  StringDict out;
  for_each_field<Options>([&](const auto& f) { out[f.name] = text_of(o.*f.member); });
  return out;
}

template <class Options>
void OptimizerOf<Options>::set_options_text(size_t group, const StringDict& text) {
  Options o;
  for_each_field<Options>([&](const auto& f) { read(text, f.name, o.*f.member); });
  check(o);
  options_[group] = o;
}

template class OptimizerOf<SGDOptions>;
template class OptimizerOf<AdamOptions>;
template class OptimizerOf<AdamWOptions>;
template class OptimizerOf<RMSpropOptions>;
template class OptimizerOf<AdagradOptions>;

}  // namespace lt::optim
