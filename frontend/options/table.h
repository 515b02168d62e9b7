// The library's settings: every LT_* environment variable it reads, with its kind, range and
// default, and the pure functions that parse, validate and print them. The process's values live
// in options/store.h; users see lt/options.h.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace lt::options {

enum class Setting : int {
  NumThreads,
  SpinUs,
  OptLevel,
  Epilogues,
  ChannelsLast,
  WideGemmResults,
  Verify,
  CacheDir,
  CacheSize,
  BufferCacheMb,
  HugePages,
  MaxPendingNodes,
  DumpDir,
  Debug,
  Metrics,
  Profile,
  FashionMnistDir,
  BucketFirstKb,
  BucketKb,
  ShmAllReduce,
  ShmStores,
};
inline constexpr int kSettingCount = 21;

enum class Kind {
  Integer,  ///< a decimal integer in [min, max]
  Switch,   ///< 0 or 1
  Folder,   ///< a folder, or "" / "off" for none
  Path,     ///< a non-empty path
  Choice,   ///< one of the words in `choices`; the number is its index
};

struct SettingInfo {
  std::string_view name;
  Kind kind;
  int64_t min = 0, max = 0;     ///< Integer (Choice: the words' indices)
  int64_t default_number = 0;   ///< Integer, Switch, Choice (NumThreads: every core instead)
  std::string_view default_text;  ///< Folder, Path (CacheDir: from XDG_CACHE_HOME or HOME)
  std::string_view choices;       ///< Choice: the words, separated by '|'
};

inline constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();

// In the order of Setting.
inline constexpr std::array<SettingInfo, kSettingCount> kSettings{{
    {"LT_NUM_THREADS", Kind::Integer, 1, 1024, 1, {}, {}},
    {"LT_SPIN_US", Kind::Integer, 0, 1000000, 100, {}, {}},
    {"LT_OPT_LEVEL", Kind::Integer, 0, 2, 2, {}, {}},
    {"LT_EPILOGUES", Kind::Switch, 0, 1, 1, {}, {}},
    {"LT_CHANNELS_LAST", Kind::Switch, 0, 1, 1, {}, {}},
    {"LT_WIDE_GEMM_RESULTS", Kind::Switch, 0, 1, 1, {}, {}},
    {"LT_VERIFY", Kind::Switch, 0, 1, 0, {}, {}},
    {"LT_CACHE_DIR", Kind::Folder, 0, 0, 0, {}, {}},
    {"LT_CACHE_SIZE", Kind::Integer, 1, kNoLimit, 256, {}, {}},
    {"LT_BUFFER_CACHE_MB", Kind::Integer, 0, 1 << 24, 1024, {}, {}},
    {"LT_HUGE_PAGES", Kind::Switch, 0, 1, 1, {}, {}},
    {"LT_MAX_PENDING_NODES", Kind::Integer, 1, kNoLimit, 200000, {}, {}},
    {"LT_DUMP_DIR", Kind::Folder, 0, 0, 0, {}, {}},
    {"LT_DEBUG", Kind::Switch, 0, 1, 0, {}, {}},
    {"LT_METRICS", Kind::Switch, 0, 1, 0, {}, {}},
    {"LT_PROFILE", Kind::Switch, 0, 1, 0, {}, {}},
    {"LT_FASHION_MNIST_DIR", Kind::Path, 0, 0, 0, "/usr/share/datasets/fashion-mnist", {}},
    {"LT_BUCKET_FIRST_KB", Kind::Integer, 1, 1 << 22, 64, {}, {}},
    {"LT_BUCKET_KB", Kind::Integer, 0, 1 << 22, 64, {}, {}},
    {"LT_SHM_ALL_REDUCE", Kind::Switch, 0, 1, 1, {}, {}},
    {"LT_SHM_STORES", Kind::Choice, 0, 2, 0, {}, "auto|cached|streaming"},
}};

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

/// The environment `lookup` reads variables from (std::getenv in the library).
using Lookup = std::function<const char*(const char*)>;
/// The default of every setting, then each LT_* variable `lookup` finds, validated; an empty
/// variable counts as unset (LT_CACHE_DIR: none). Throws on the first bad variable.
Settings settings_from_environment(const Lookup& lookup);
/// Where compiled objects go unless LT_CACHE_DIR says: $XDG_CACHE_HOME/lazytrain, else
/// $HOME/.cache/lazytrain, else none ("").
std::string default_cache_dir(const Lookup& lookup);

/// The value as set_option accepts it ("off" for a Folder set to none).
std::string value_text(Setting s, const SettingValue& v);
/// "lazytrain options" and then one line per setting: name, value and source.
std::string settings_report(const Settings& settings);

}  // namespace lt::options
