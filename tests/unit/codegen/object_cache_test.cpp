#include "codegen/object_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "codegen/jit.h"
#include "tests/unit/codegen/test_modules.h"

namespace lt::codegen {
namespace {

namespace fs = std::filesystem;
using testing::add_saxpy;
using testing::SaxpyFn;
using testing::TestModule;

// A fresh cache folder per test.
class ObjectCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = fs::temp_directory_path() /
           ("lt_codegen_cache_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Compiles saxpy under `key` in a new Jit caching in `dir` (default: the test's folder),
  // checks it, and keeps the Jit alive in jits_.
  void run_saxpy(const std::string& key, int opt_level = 3, std::optional<std::string> dir = {}) {
    jits_.push_back(Jit::create(dir ? *dir : dir_.string()));
    Jit& jit = *jits_.back();
    TestModule tm(jit);
    add_saxpy(*tm.m);
    JitOptions o;
    o.cache_key = key;
    o.opt_level = opt_level;
    tm.add_to(jit, o);
    auto fn = reinterpret_cast<SaxpyFn>(jit.lookup("saxpy"));
    std::vector<float> x(1003, 2.0f), y(1003, 1.0f);
    fn(x.data(), y.data(), 3.0f, 1003);
    for (float v : y) ASSERT_EQ(v, 7.0f);
  }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    if (fs::exists(dir_))
      for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path());
    return out;
  }

  fs::path dir_;
  std::vector<std::unique_ptr<Jit>> jits_;
};

TEST_F(ObjectCacheTest, MissWritesThenHitLoads) {
  const ObjectCacheStats s0 = object_cache_stats();
  run_saxpy("0123abcdef");
  const ObjectCacheStats s1 = object_cache_stats();
  EXPECT_EQ(s1.misses - s0.misses, 1u);
  EXPECT_EQ(s1.writes - s0.writes, 1u);
  EXPECT_EQ(s1.hits - s0.hits, 0u);
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_EQ(entries()[0].filename().string().rfind("0123abcdef.O3.v512", 0), 0u) << entries()[0];
  run_saxpy("0123abcdef");
  const ObjectCacheStats s2 = object_cache_stats();
  EXPECT_EQ(s2.hits - s1.hits, 1u);
  EXPECT_EQ(s2.writes - s1.writes, 0u);
  EXPECT_EQ(entries().size(), 1u);
}

TEST_F(ObjectCacheTest, KeyOptLevelAndOddKeysGiveSeparateEntries) {
  run_saxpy("k1");
  run_saxpy("k2");
  run_saxpy("k1", 2);
  run_saxpy("../not/a/path");  // hashed into a plain file name
  const auto files = entries();
  EXPECT_EQ(files.size(), 4u);
  for (const auto& f : files) EXPECT_TRUE(fs::is_regular_file(f)) << f;
}

TEST_F(ObjectCacheTest, NoKeyOrCacheOffWritesNothing) {
  const ObjectCacheStats s0 = object_cache_stats();
  run_saxpy("");
  EXPECT_TRUE(entries().empty());
  run_saxpy("abc", 3, "");  // a Jit without a cache folder
  EXPECT_TRUE(entries().empty());
  const ObjectCacheStats s1 = object_cache_stats();
  EXPECT_EQ(s1.misses + s1.hits + s1.writes, s0.misses + s0.hits + s0.writes);
}

// Each damage is detected, reported once, the entry removed and rewritten by the recompile,
// which gives the right result; the rewritten entry then hits.
TEST_F(ObjectCacheTest, CorruptEntriesAreReportedAndRecompiled) {
  run_saxpy("c0ffee");
  ASSERT_EQ(entries().size(), 1u);
  const fs::path entry = entries()[0];
  const auto size = fs::file_size(entry);
  struct Damage {
    const char* name;
    void (*apply)(const fs::path&, uintmax_t);
    const char* why;
  };
  const Damage damages[] = {
      {"flipped payload byte",
       [](const fs::path& p, uintmax_t n) {
         std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
         f.seekg(static_cast<std::streamoff>(n - 7));
         const char c = static_cast<char>(f.get());
         f.seekp(static_cast<std::streamoff>(n - 7));
         f.put(static_cast<char>(c ^ 0x20));
       },
       "checksum mismatch"},
      {"truncated payload", [](const fs::path& p, uintmax_t n) { fs::resize_file(p, n / 2); },
       "truncated"},
      {"truncated header", [](const fs::path& p, uintmax_t) { fs::resize_file(p, 10); },
       "truncated header"},
      {"bad magic",
       [](const fs::path& p, uintmax_t) {
         std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
         f.put('X');
       },
       "bad magic"},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.name);
    d.apply(entry, size);
    const ObjectCacheStats s0 = object_cache_stats();
    ::testing::internal::CaptureStderr();
    run_saxpy("c0ffee");
    const std::string err = ::testing::internal::GetCapturedStderr();
    const ObjectCacheStats s1 = object_cache_stats();
    EXPECT_EQ(s1.corrupt - s0.corrupt, 1u);
    EXPECT_EQ(s1.writes - s0.writes, 1u);
    const std::string line = "lt: cache entry " + entry.string() + " is corrupt (";
    const auto at = err.find(line);
    EXPECT_NE(at, std::string::npos) << err;
    EXPECT_EQ(err.find(line, at + 1), std::string::npos) << "reported twice: " << err;
    EXPECT_NE(err.find(d.why), std::string::npos) << err;
    EXPECT_EQ(fs::file_size(entry), size);  // rewritten whole
    run_saxpy("c0ffee");
    EXPECT_EQ(object_cache_stats().hits - s1.hits, 1u);
  }
}

}  // namespace
}  // namespace lt::codegen
