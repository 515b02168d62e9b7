// The library's settings: the rows of settings.def (every LT_* environment variable it reads,
// with its kind, range, default and help) as the enum Setting and the table kSettings, and the
// pure functions that parse, validate and print them. The process's values live in
// options/store.h; users see lt/options.h.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace lt::options {

enum class Kind {
  Integer,  ///< a decimal integer in [min, max]
  Switch,   ///< 0 or 1
  Folder,   ///< a folder, or "" / "off" for none
  Path,     ///< a non-empty path
  Choice,   ///< one of the words in `choices`; the number is its index
};

/// The environment `lookup` reads variables from (std::getenv in the library).
using Lookup = std::function<const char*(const char*)>;

struct SettingInfo {
  std::string_view name = {};
  Kind kind = Kind::Integer;
  int64_t min = 0, max = 0;            ///< Integer (Switch: 0 and 1; Choice: the words' indices)
  int64_t default_number = 0;          ///< Integer, Switch, Choice; also before lt::init()
  std::string_view default_text = {};  ///< Folder, Path
  std::string_view choices = {};       ///< Choice: the words, separated by '|'
  std::string_view help = {};          ///< one line: what the setting does
  /// Where the default depends on the machine, what it is there (read at lt::init()).
  int64_t (*machine_number)() = nullptr;                 ///< Integer: clamped to [min, max]
  std::string (*machine_text)(const Lookup&) = nullptr;  ///< Folder
};

inline constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

/// The machine defaults of settings.def: every core (std::thread::hardware_concurrency), and
/// $XDG_CACHE_HOME/lazytrain, else $HOME/.cache/lazytrain, else none ("").
int64_t every_core();
std::string default_cache_dir(const Lookup& lookup);

/// The values of settings.def's rows; each row adds its name and help.
namespace rows {

constexpr SettingInfo integer(int64_t min, int64_t max, int64_t def,
                              int64_t (*machine)() = nullptr) {
  return {.kind = Kind::Integer,
          .min = min,
          .max = max,
          .default_number = def,
          .machine_number = machine};
}
constexpr SettingInfo on_off(int64_t def) {
  return {.kind = Kind::Switch, .min = 0, .max = 1, .default_number = def};
}
constexpr SettingInfo folder(std::string (*machine)(const Lookup&) = nullptr) {
  return {.kind = Kind::Folder, .machine_text = machine};
}
constexpr SettingInfo path(std::string_view def) {
  return {.kind = Kind::Path, .default_text = def};
}
constexpr SettingInfo choice(std::string_view words, std::string_view def) {
  SettingInfo i{.kind = Kind::Choice, .choices = words};
  i.max = std::count(words.begin(), words.end(), '|');
  // The default's index; a default that is none of the words stops the build here.
  for (size_t start = 0;; start = words.find('|', start) + 1, ++i.default_number) {
    if (words.substr(start, words.find('|', start) - start) == def) break;
    if (i.default_number == i.max) throw "choice(): the default is not one of the words";
  }
  return i;
}
constexpr SettingInfo named(std::string_view name, SettingInfo value, std::string_view help) {
  value.name = name;
  value.help = help;
  return value;
}

}  // namespace rows

enum class Setting : int {
#define LT_SETTING(id, ...) id,
#include "frontend/options/settings.def"
#undef LT_SETTING
};

// In the order of Setting.
inline constexpr auto kSettings = [] {
  using namespace rows;
  return std::to_array<SettingInfo>({
#define LT_SETTING(id, name, value, help) named(name, value, help),
#include "frontend/options/settings.def"
#undef LT_SETTING
  });
}();
inline constexpr int kSettingCount = static_cast<int>(kSettings.size());

/// The longest name and a space: the report's first column.
inline constexpr size_t kNameColumn = [] {
  size_t longest = 0;
  for (const SettingInfo& i : kSettings) longest = std::max(longest, i.name.size());
  return longest + 1;
}();

inline constexpr const SettingInfo& info(Setting s) { return kSettings[static_cast<int>(s)]; }
std::optional<Setting> find_setting(std::string_view name);

enum class Source { Default, Env, Code };
std::string_view source_name(Source s);  ///< "default", "env", "code"

struct SettingValue {
  int64_t number = 0;  ///< Integer, Switch and Choice settings
  std::string text;    ///< Folder ("" for none) and Path settings
  Source source = Source::Default;
  bool operator==(const SettingValue&) const = default;
};
using Settings = std::array<SettingValue, kSettingCount>;

/// `text` as a value of `s`. A bad value throws lt::InputError naming the variable, the value,
/// where it was set (the environment; code, or `set_by` such as a command-line flag) and what
/// is allowed: "LT_OPT_LEVEL=7 (from the environment): expected an integer from 0 to 2".
SettingValue parse_setting(Setting s, std::string_view text, Source source,
                           std::string_view set_by = {});

/// Every setting's default on this machine (`lookup` gives the variables a machine default
/// reads, such as HOME; no LT_* variable is read).
Settings default_settings(const Lookup& lookup);
/// default_settings(), then each LT_* variable `lookup` finds, validated; an empty variable counts
/// as unset, except a folder's, which it sets to none. Throws on the first bad variable.
Settings settings_from_environment(const Lookup& lookup);

/// The value as set_option accepts it ("off" for a Folder set to none).
std::string value_text(Setting s, const SettingValue& v);
/// "lazytrain options" and then one line per setting: name, value and source.
std::string settings_report(const Settings& settings);

}  // namespace lt::options
