#include "frontend/options/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <thread>
#include <vector>

#include "ir/error.h"

namespace lt::options {

// Every row of settings.def has an LT_ name, a help line and a default in its range.
constexpr bool well_formed(const SettingInfo& i) {
  return i.name.starts_with("LT_") && !i.help.empty() && i.min <= i.default_number &&
         i.default_number <= i.max;
}
static_assert(std::ranges::all_of(kSettings, well_formed));

std::optional<Setting> find_setting(std::string_view name) {
  for (int i = 0; i < kSettingCount; ++i)
    if (kSettings[i].name == name) return static_cast<Setting>(i);
  return std::nullopt;
}

std::string_view source_name(Source s) {
  switch (s) {
    case Source::Default: return "default";
    case Source::Env: return "env";
    case Source::Code: return "code";
  }
  LT_UNREACHABLE();
}

namespace {

// The words of a Choice setting, in order.
std::vector<std::string_view> words(const SettingInfo& i) {
  std::vector<std::string_view> out;
  std::string_view rest = i.choices;
  for (size_t bar; (bar = rest.find('|')) != std::string_view::npos; rest.remove_prefix(bar + 1))
    out.push_back(rest.substr(0, bar));
  out.push_back(rest);
  return out;
}

std::string allowed(const SettingInfo& i) {
  switch (i.kind) {
    case Kind::Integer:
      return i.max == kNoLimit ? fmt::format("an integer >= {}", i.min)
                               : fmt::format("an integer from {} to {}", i.min, i.max);
    case Kind::Switch: return "0 or 1";
    case Kind::Folder: return "a folder, or off";
    case Kind::Path: return "a non-empty path";
    case Kind::Choice: {
      const std::vector<std::string_view> w = words(i);
      std::string s = "one of ";
      for (size_t k = 0; k < w.size(); ++k)
        s += fmt::format("{}{}", k == 0 ? "" : k + 1 == w.size() ? " or " : ", ", w[k]);
      return s;
    }
  }
  LT_UNREACHABLE();
}

std::optional<int64_t> parse_integer(std::string_view text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

}  // namespace

SettingValue parse_setting(Setting s, std::string_view text, Source source,
                           std::string_view set_by) {
  const SettingInfo& i = info(s);
  auto fail = [&]() -> SettingValue {
    const std::string where = source == Source::Env ? "from the environment"
                              : set_by.empty()      ? "set in code"
                                                    : fmt::format("set by {}", set_by);
    throw InputError(
        fmt::format("{}={} ({}): expected {}", i.name, text, where, allowed(i)));
  };
  SettingValue v;
  v.source = source;
  switch (i.kind) {
    case Kind::Integer:
    case Kind::Switch: {
      const std::optional<int64_t> n = parse_integer(text);
      if (!n || *n < i.min || *n > i.max) return fail();
      v.number = *n;
      return v;
    }
    case Kind::Folder:
      if (text != "off") v.text = std::string(text);
      return v;
    case Kind::Path:
      if (text.empty()) return fail();
      v.text = std::string(text);
      return v;
    case Kind::Choice: {
      const std::vector<std::string_view> w = words(i);
      const auto it = std::find(w.begin(), w.end(), text);
      if (it == w.end()) return fail();
      v.number = it - w.begin();
      return v;
    }
  }
  LT_UNREACHABLE();
}

int64_t every_core() { return std::thread::hardware_concurrency(); }

std::string default_cache_dir(const Lookup& lookup) {
  if (const char* x = lookup("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/lazytrain";
  if (const char* h = lookup("HOME"); h && *h) return std::string(h) + "/.cache/lazytrain";
  return "";
}

Settings default_settings(const Lookup& lookup) {
  Settings out;
  for (int k = 0; k < kSettingCount; ++k) {
    const SettingInfo& i = kSettings[k];
    out[k].number =
        i.machine_number ? std::clamp(i.machine_number(), i.min, i.max) : i.default_number;
    out[k].text = i.machine_text ? i.machine_text(lookup) : std::string(i.default_text);
  }
  return out;
}

Settings settings_from_environment(const Lookup& lookup) {
  Settings out = default_settings(lookup);
  for (int k = 0; k < kSettingCount; ++k) {
    const SettingInfo& i = kSettings[k];
    const char* e = lookup(std::string(i.name).c_str());
    if (!e || (!*e && i.kind != Kind::Folder)) continue;  // a folder's empty value: none
    out[k] = parse_setting(static_cast<Setting>(k), e, Source::Env);
  }
  return out;
}

std::string value_text(Setting s, const SettingValue& v) {
  switch (info(s).kind) {
    case Kind::Integer:
    case Kind::Switch: return std::to_string(v.number);
    case Kind::Folder: return v.text.empty() ? "off" : v.text;
    case Kind::Path: return v.text;
    case Kind::Choice: return std::string(words(info(s)).at(static_cast<size_t>(v.number)));
  }
  LT_UNREACHABLE();
}

std::string settings_report(const Settings& settings) {
  std::string s = "lazytrain options\n";
  for (int k = 0; k < kSettingCount; ++k) {
    const Setting id = static_cast<Setting>(k);
    s += fmt::format("  {:<{}}{} ({})\n", info(id).name, kNameColumn, value_text(id, settings[k]),
                     source_name(settings[k].source));
  }
  return s;
}

}  // namespace lt::options
