#include "frontend/options/store.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "ir/error.h"
#include "lt/options.h"
#include "runtime/buffer.h"
#include "runtime/thread_pool.h"

namespace lt::options {

namespace detail {
namespace {
template <size_t... I>
constexpr std::array<std::atomic<int64_t>, kSettingCount> table_defaults(
    std::index_sequence<I...>) {
  return {{std::atomic<int64_t>(kSettings[I].default_number)...}};
}
}  // namespace
constinit std::array<std::atomic<int64_t>, kSettingCount> g_numbers =
    table_defaults(std::make_index_sequence<kSettingCount>{});
}  // namespace detail

namespace {

struct Store {
  std::mutex m;
  Settings values;
  Settings defaults;
};
Store& store() {
  static Store* s = new Store;  // never destroyed: read by reports printed at exit
  return *s;
}

const char* env(const char* name) { return std::getenv(name); }

// The runtime does not read the environment: its settings are passed down.
void pass_down(Setting s, const SettingValue& v) {
  if (s == Setting::NumThreads) rt::set_num_threads(static_cast<int>(v.number));
  if (s == Setting::SpinUs) rt::set_spin_us(v.number);
  if (s == Setting::BufferCacheMb) rt::Buffer::set_cache_limit(static_cast<size_t>(v.number) << 20);
  if (s == Setting::HugePages) rt::Buffer::set_huge_pages(v.number != 0);
}

void store_value(Setting s, SettingValue v) {
  Store& st = store();
  std::lock_guard<std::mutex> lk(st.m);
  detail::g_numbers[static_cast<int>(s)].store(v.number, std::memory_order_relaxed);
  st.values[static_cast<int>(s)] = std::move(v);
}

void load_environment() {
  const Settings values = settings_from_environment(env);
  store().defaults = default_settings(env);
  for (int k = 0; k < kSettingCount; ++k) {
    store_value(static_cast<Setting>(k), values[k]);
    if (values[k].source != Source::Default) pass_down(static_cast<Setting>(k), values[k]);
  }
  if (values[static_cast<int>(Setting::Debug)].number)
    std::fputs(settings_report(values).c_str(), stderr);
}

Setting setting_named(std::string_view name) {
  if (std::optional<Setting> s = find_setting(name)) return *s;
  std::string names;
  for (const SettingInfo& i : kSettings) names += (names.empty() ? "" : ", ") + std::string(i.name);
  throw InputError(fmt::format("no setting named {} (the settings: {})", name, names));
}

}  // namespace

std::string text(Setting s) {
  Store& st = store();
  std::lock_guard<std::mutex> lk(st.m);
  return st.values[static_cast<int>(s)].text;
}

SettingValue default_value(Setting s) {
  init();
  Store& st = store();
  std::lock_guard<std::mutex> lk(st.m);
  return st.defaults[static_cast<int>(s)];
}

void set(Setting s, SettingValue v) {
  init();
  pass_down(s, v);
  store_value(s, std::move(v));
}

void set_number(Setting s, int64_t n) {
  set(s, parse_setting(s, std::to_string(n), Source::Code));
}

bool started_by_mpirun() {
  return env("OMPI_COMM_WORLD_SIZE") != nullptr && env("OMPI_COMM_WORLD_RANK") != nullptr;
}

}  // namespace lt::options

namespace lt {

void init() {
  static const bool once = [] {
    options::load_environment();
    return true;
  }();
  (void)once;
}

void set_option(std::string_view name, std::string_view value, std::string_view set_by) {
  init();
  const options::Setting s = options::setting_named(name);
  options::set(s, options::parse_setting(s, value, options::Source::Code, set_by));
}

std::string option(std::string_view name) {
  init();
  const options::Setting s = options::setting_named(name);
  options::Store& st = options::store();
  std::lock_guard<std::mutex> lk(st.m);
  return options::value_text(s, st.values[static_cast<int>(s)]);
}

std::string options_report() {
  init();
  options::Store& st = options::store();
  std::lock_guard<std::mutex> lk(st.m);
  return options::settings_report(st.values);
}

}  // namespace lt
