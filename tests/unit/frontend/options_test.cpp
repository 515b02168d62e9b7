// The settings: validation of every LT_* variable (exact error text), overrides from code, and the
// report.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "frontend/options/store.h"
#include "frontend/options/table.h"
#include "lt/lazy.h"
#include "lt/options.h"
#include "lt/threads.h"
#include "runtime/buffer.h"
#include "runtime/thread_pool.h"
#include "tests/support/error_of.h"

namespace lt::options {
namespace {

// An environment of its own, so that the process's variables play no part.
struct FakeEnv {
  std::map<std::string, std::string> vars;
  Lookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

Settings from(std::map<std::string, std::string> vars) {
  FakeEnv env{std::move(vars)};
  return settings_from_environment(env.lookup());
}

std::string error_from(const std::string& name, const std::string& value) {
  try {
    from({{name, value}});
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

int64_t cores() {
  return std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 1024);
}

TEST(Options, EveryVariableRejectsABadValueNamingItAndWhatIsAllowed) {
  struct Case {
    const char* name;
    const char* value;
    const char* allowed;
  };
  const Case cases[] = {
      {"LT_OPT_LEVEL", "7", "an integer from 0 to 2"},
      {"LT_OPT_LEVEL", "-1", "an integer from 0 to 2"},
      {"LT_NUM_THREADS", "-3", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", "0", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", "abc", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", "4x", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", " 4", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", "+4", "an integer from 1 to 1024"},
      {"LT_NUM_THREADS", "1025", "an integer from 1 to 1024"},
      {"LT_EPILOGUES", "true", "0 or 1"},
      {"LT_CHANNELS_LAST", "on", "0 or 1"},
      {"LT_VERIFY", "2", "0 or 1"},
      {"LT_DEBUG", "yes", "0 or 1"},
      {"LT_METRICS", "-1", "0 or 1"},
      {"LT_PROFILE", "1.0", "0 or 1"},
      {"LT_CACHE_SIZE", "0", "an integer >= 1"},
      {"LT_CACHE_SIZE", "99999999999999999999", "an integer >= 1"},
      {"LT_BUFFER_CACHE_MB", "-1", "an integer from 0 to 16777216"},
      {"LT_BUFFER_CACHE_MB", "16777217", "an integer from 0 to 16777216"},
      {"LT_MAX_PENDING_NODES", "1e5", "an integer >= 1"},
      {"LT_SHM_STORES", "fast", "one of auto, cached or streaming"},
      {"LT_SHM_STORES", "Cached", "one of auto, cached or streaming"},
      {"LT_SHM_STORES", "1", "one of auto, cached or streaming"},
  };
  for (const Case& c : cases)
    EXPECT_EQ(error_from(c.name, c.value), std::string(c.name) + "=" + c.value +
                                               " (from the environment): expected " + c.allowed);
  EXPECT_EQ(error_from("LT_OPT_LEVEL", "7"),
            "LT_OPT_LEVEL=7 (from the environment): expected an integer from 0 to 2");
  EXPECT_EQ(error_from("LT_NUM_THREADS", "-3"),
            "LT_NUM_THREADS=-3 (from the environment): expected an integer from 1 to 1024");
  EXPECT_EQ(error_from("LT_NUM_THREADS", "abc"),
            "LT_NUM_THREADS=abc (from the environment): expected an integer from 1 to 1024");
}

TEST(Options, EveryVariableTakesAGoodValue) {
  const Settings s = from({{"LT_NUM_THREADS", "3"},
                           {"LT_OPT_LEVEL", "0"},
                           {"LT_EPILOGUES", "0"},
                           {"LT_VERIFY", "1"},
                           {"LT_CACHE_DIR", "/tmp/objects"},
                           {"LT_CACHE_SIZE", "9"},
                           {"LT_BUFFER_CACHE_MB", "0"},
                           {"LT_HUGE_PAGES", "0"},
                           {"LT_MAX_PENDING_NODES", "100"},
                           {"LT_DUMP_DIR", "/tmp/dumps"},
                           {"LT_DEBUG", "1"},
                           {"LT_METRICS", "1"},
                           {"LT_PROFILE", "1"},
                           {"LT_FASHION_MNIST_DIR", "/data/fm"},
                           {"LT_SHM_STORES", "streaming"}});
  auto at = [&](Setting k) { return s[static_cast<int>(k)]; };
  auto env_number = [](int64_t n) { return SettingValue{n, "", Source::Env}; };
  auto env_text = [](std::string t) { return SettingValue{0, std::move(t), Source::Env}; };
  EXPECT_EQ(at(Setting::NumThreads), env_number(3));
  EXPECT_EQ(at(Setting::OptLevel), env_number(0));
  EXPECT_EQ(at(Setting::Epilogues), env_number(0));
  EXPECT_EQ(at(Setting::Verify), env_number(1));
  EXPECT_EQ(at(Setting::CacheDir), env_text("/tmp/objects"));
  EXPECT_EQ(at(Setting::CacheSize), env_number(9));
  EXPECT_EQ(at(Setting::BufferCacheMb), env_number(0));
  EXPECT_EQ(at(Setting::HugePages), env_number(0));
  EXPECT_EQ(at(Setting::MaxPendingNodes), env_number(100));
  EXPECT_EQ(at(Setting::DumpDir), env_text("/tmp/dumps"));
  EXPECT_EQ(at(Setting::Debug), env_number(1));
  EXPECT_EQ(at(Setting::Metrics), env_number(1));
  EXPECT_EQ(at(Setting::Profile), env_number(1));
  EXPECT_EQ(at(Setting::FashionMnistDir), env_text("/data/fm"));
  EXPECT_EQ(at(Setting::ShmStores), env_number(2));  // the index of the word
  EXPECT_EQ(value_text(Setting::ShmStores, at(Setting::ShmStores)), "streaming");
  EXPECT_EQ(from({{"LT_SHM_STORES", "cached"}})[static_cast<int>(Setting::ShmStores)],
            env_number(1));
}

TEST(Options, EmptyMeansUnsetAndFoldersTakeOff) {
  const Settings s = from({{"LT_OPT_LEVEL", ""}, {"LT_FASHION_MNIST_DIR", ""},
                           {"LT_CACHE_DIR", ""}, {"LT_DUMP_DIR", "off"}, {"HOME", "/home/u"}});
  EXPECT_EQ(s[static_cast<int>(Setting::OptLevel)], (SettingValue{2, "", Source::Default}));
  EXPECT_EQ(s[static_cast<int>(Setting::FashionMnistDir)],
            (SettingValue{0, "/usr/share/datasets/fashion-mnist", Source::Default}));
  EXPECT_EQ(s[static_cast<int>(Setting::CacheDir)], (SettingValue{0, "", Source::Env}));
  EXPECT_EQ(s[static_cast<int>(Setting::DumpDir)], (SettingValue{0, "", Source::Env}));
  EXPECT_EQ(value_text(Setting::CacheDir, s[static_cast<int>(Setting::CacheDir)]), "off");
}

TEST(Options, DefaultCacheFolder) {
  EXPECT_EQ(default_cache_dir(FakeEnv{{{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}}.lookup()),
            "/x/lazytrain");
  EXPECT_EQ(default_cache_dir(FakeEnv{{{"HOME", "/h"}}}.lookup()), "/h/.cache/lazytrain");
  EXPECT_EQ(default_cache_dir(FakeEnv{{{"XDG_CACHE_HOME", ""}, {"HOME", "/h"}}}.lookup()),
            "/h/.cache/lazytrain");
  EXPECT_EQ(default_cache_dir(FakeEnv{}.lookup()), "");
}

TEST(Options, DefaultsReadTheMachineButNoVariable) {
  const Settings d = default_settings(FakeEnv{{{"HOME", "/h"}, {"LT_OPT_LEVEL", "1"}}}.lookup());
  EXPECT_EQ(d[static_cast<int>(Setting::OptLevel)], (SettingValue{2, "", Source::Default}));
  EXPECT_EQ(d[static_cast<int>(Setting::NumThreads)], (SettingValue{cores(), "", Source::Default}));
  EXPECT_EQ(d[static_cast<int>(Setting::CacheDir)].text, "/h/.cache/lazytrain");
  EXPECT_EQ(d[static_cast<int>(Setting::DumpDir)].text, "");
  EXPECT_EQ(d[static_cast<int>(Setting::ShmStores)].number, 0);  // auto
  for (int k = 0; k < kSettingCount; ++k) EXPECT_FALSE(kSettings[k].help.empty()) << k;
}

TEST(Options, ReportListsEverySettingWithItsValueAndSource) {
  Settings s = from({{"HOME", "/home/u"}, {"LT_OPT_LEVEL", "1"}, {"LT_DUMP_DIR", "/tmp/d"}});
  s[static_cast<int>(Setting::CacheSize)] = {17, "", Source::Code};
  s[static_cast<int>(Setting::NumThreads)].number = 4;
  EXPECT_EQ(settings_report(s),
            "lazytrain options\n"
            "  LT_NUM_THREADS       4 (default)\n"
            "  LT_SPIN_US           100 (default)\n"
            "  LT_OPT_LEVEL         1 (env)\n"
            "  LT_EPILOGUES         1 (default)\n"
            "  LT_CHANNELS_LAST     1 (default)\n"
            "  LT_WIDE_GEMM_RESULTS 1 (default)\n"
            "  LT_VERIFY            0 (default)\n"
            "  LT_CACHE_DIR         /home/u/.cache/lazytrain (default)\n"
            "  LT_CACHE_SIZE        17 (code)\n"
            "  LT_BUFFER_CACHE_MB   1024 (default)\n"
            "  LT_HUGE_PAGES        1 (default)\n"
            "  LT_MAX_PENDING_NODES 200000 (default)\n"
            "  LT_DUMP_DIR          /tmp/d (env)\n"
            "  LT_DEBUG             0 (default)\n"
            "  LT_METRICS           0 (default)\n"
            "  LT_PROFILE           0 (default)\n"
            "  LT_FASHION_MNIST_DIR /usr/share/datasets/fashion-mnist (default)\n"
            "  LT_BUCKET_FIRST_KB   64 (default)\n"
            "  LT_BUCKET_KB         64 (default)\n"
            "  LT_SHM_ALL_REDUCE    1 (default)\n"
            "  LT_SHM_STORES        auto (default)\n");
  EXPECT_EQ(from({})[static_cast<int>(Setting::NumThreads)].number, cores());
}

std::string error_of(const std::function<void()>& f) {
  return testing::error_of<InputError>(f);
}

// Restores a setting of the process after a test that overrides it.
struct Saved {
  explicit Saved(std::string n) : name(std::move(n)), value(option(name)) {}
  ~Saved() { set_option(name, value); }
  std::string name, value;
};

TEST(Options, OverridesFromCodeAreValidatedLikeTheVariable) {
  Saved level("LT_OPT_LEVEL"), threads("LT_NUM_THREADS");
  const std::string before = option("LT_OPT_LEVEL");
  EXPECT_EQ(error_of([] { set_option("LT_OPT_LEVEL", "7"); }),
            "LT_OPT_LEVEL=7 (set in code): expected an integer from 0 to 2");
  EXPECT_EQ(error_of([] { set_option("LT_NUM_THREADS", "-3", "--threads"); }),
            "LT_NUM_THREADS=-3 (set by --threads): expected an integer from 1 to 1024");
  EXPECT_EQ(error_of([] { set_num_threads(-3); }),
            "LT_NUM_THREADS=-3 (set in code): expected an integer from 1 to 1024");
  EXPECT_EQ(error_of([] { set_compile_options({.opt_level = 7}); }),
            "LT_OPT_LEVEL=7 (set in code): expected an integer from 0 to 2");
  EXPECT_EQ(error_of([] { set_option("LT_FASHION_MNIST_DIR", ""); }),
            "LT_FASHION_MNIST_DIR= (set in code): expected a non-empty path");
  // From code, an empty value is a value like any other: a number's error, a folder's none.
  EXPECT_EQ(error_of([] { set_option("LT_OPT_LEVEL", ""); }),
            "LT_OPT_LEVEL= (set in code): expected an integer from 0 to 2");
  EXPECT_EQ(error_of([] { set_option("LT_SHM_STORES", ""); }),
            "LT_SHM_STORES= (set in code): expected one of auto, cached or streaming");
  EXPECT_EQ(error_of([] { set_option("LT_OPTLEVEL", "1"); }),
            "no setting named LT_OPTLEVEL (the settings: LT_NUM_THREADS, LT_SPIN_US, "
            "LT_OPT_LEVEL, LT_EPILOGUES, LT_CHANNELS_LAST, LT_WIDE_GEMM_RESULTS, LT_VERIFY, "
            "LT_CACHE_DIR, LT_CACHE_SIZE, LT_BUFFER_CACHE_MB, LT_HUGE_PAGES, LT_MAX_PENDING_NODES, "
            "LT_DUMP_DIR, LT_DEBUG, LT_METRICS, LT_PROFILE, LT_FASHION_MNIST_DIR, "
            "LT_BUCKET_FIRST_KB, LT_BUCKET_KB, LT_SHM_ALL_REDUCE, LT_SHM_STORES)");
  EXPECT_EQ(option("LT_OPT_LEVEL"), before);  // a refused value changes nothing
}

TEST(Options, OverridesReachTheirConsumers) {
  Saved threads("LT_NUM_THREADS"), buffers("LT_BUFFER_CACHE_MB"), size("LT_CACHE_SIZE"),
      spin("LT_SPIN_US"), huge("LT_HUGE_PAGES");
  set_option("LT_NUM_THREADS", "3");
  EXPECT_EQ(num_threads(), 3);
  EXPECT_EQ(rt::num_threads(), 3);
  set_num_threads(2);
  EXPECT_EQ(option("LT_NUM_THREADS"), "2");
  EXPECT_EQ(rt::num_threads(), 2);
  set_option("LT_BUFFER_CACHE_MB", "3");
  EXPECT_EQ(rt::Buffer::cache_limit(), size_t{3} << 20);
  set_option("LT_HUGE_PAGES", "0");
  EXPECT_FALSE(rt::Buffer::huge_pages());
  set_option("LT_HUGE_PAGES", "1");
  EXPECT_TRUE(rt::Buffer::huge_pages());
  set_option("LT_SPIN_US", "0");
  EXPECT_EQ(rt::spin_us(), 0);
  set_option("LT_CACHE_SIZE", "17");
  EXPECT_EQ(number(Setting::CacheSize), 17);
  const std::string report = options_report();
  EXPECT_NE(report.find("\n  LT_CACHE_SIZE        17 (code)\n"), std::string::npos) << report;
  EXPECT_NE(report.find("\n  LT_NUM_THREADS       2 (code)\n"), std::string::npos) << report;
}

TEST(Options, AnEmptyFolderFromCodeIsNone) {
  Saved dump("LT_DUMP_DIR");
  set_option("LT_DUMP_DIR", "/tmp/lt_options_dumps");
  set_option("LT_DUMP_DIR", "");
  EXPECT_EQ(option("LT_DUMP_DIR"), "off");
  EXPECT_EQ(text(Setting::DumpDir), "");
}

TEST(Options, CompileOptionsAreTheirSettings) {
  const CompileOptions saved = compile_options();
  Saved dir("LT_CACHE_DIR");
  set_option("LT_CACHE_DIR", "/tmp/lt_options_test");
  CompileOptions o = saved;
  o.opt_level = 1;
  o.epilogues = false;
  o.channels_last = false;
  o.wide_gemm_results = false;
  o.verify = !saved.verify;
  o.disk_cache = false;
  set_compile_options(o);
  EXPECT_EQ(option("LT_OPT_LEVEL"), "1");
  EXPECT_EQ(option("LT_EPILOGUES"), "0");
  EXPECT_EQ(option("LT_CHANNELS_LAST"), "0");
  EXPECT_EQ(option("LT_WIDE_GEMM_RESULTS"), "0");
  EXPECT_EQ(option("LT_VERIFY"), saved.verify ? "0" : "1");
  EXPECT_EQ(option("LT_CACHE_DIR"), "off");
  set_option("LT_OPT_LEVEL", "2");
  EXPECT_EQ(compile_options().opt_level, 2);
  EXPECT_FALSE(compile_options().disk_cache);
  o.disk_cache = true;  // back on: the machine's default folder
  set_compile_options(o);
  EXPECT_EQ(option("LT_CACHE_DIR"),
            value_text(Setting::CacheDir, default_value(Setting::CacheDir)));
  set_compile_options(saved);
  EXPECT_EQ(compile_options().verify, saved.verify);
  EXPECT_EQ(compile_options().epilogues, saved.epilogues);
  EXPECT_EQ(compile_options().channels_last, saved.channels_last);
  EXPECT_EQ(compile_options().wide_gemm_results, saved.wide_gemm_results);
}

}  // namespace
}  // namespace lt::options
