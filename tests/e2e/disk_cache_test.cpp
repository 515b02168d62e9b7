// The on-disk object cache seen from a training program: a second run of the same steps (a fresh
// in-memory graph cache, as in a new process) compiles nothing with LLVM, and a corrupted entry
// is detected, recompiled and gives the same results.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "examples/mlp_model.h"
#include "lt/lazy.h"
#include "lt/metrics.h"
#include "lt/options.h"
#include "tests/support/train_steps.h"

namespace lt {
namespace {

std::vector<float> lazy_losses(int steps) {
  manual_seed(11);
  examples::Mlp model({16, 8, 4});
  optim::SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
  const Tensor x = randn({8, 16});
  const Tensor y = cast(rand({8}) * 4.0, DType::I64);
  return testing::train_steps(opt, steps, [&](int) { return cross_entropy(model.forward(x), y); },
                              {.mode = Mode::Lazy});
}

class DiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("lt_disk_cache_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    saved_dir_ = option("LT_CACHE_DIR");
    set_option("LT_CACHE_DIR", dir_.string());
    saved_ = compile_options();
    CompileOptions o = saved_;
    o.opt_level = 2;
    o.disk_cache = true;
    set_compile_options(o);
  }
  void TearDown() override {
    set_compile_options(saved_);
    set_option("LT_CACHE_DIR", saved_dir_);
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string saved_dir_;
  CompileOptions saved_;
};

TEST_F(DiskCache, SecondRunCompilesNothing) {
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> first = lazy_losses(4);
  EXPECT_GT(metrics::counter("llvm_compile"), 0);
  EXPECT_FALSE(std::filesystem::is_empty(dir_));

  clear_graph_cache();  // a new process: nothing in memory, everything on disk
  metrics::reset();
  const std::vector<float> second = lazy_losses(4);
  EXPECT_EQ(metrics::counter("llvm_compile"), 0);
  EXPECT_GT(metrics::counter("disk_cache_hit"), 0);
  EXPECT_EQ(first, second);
}

TEST_F(DiskCache, CorruptEntryIsRecompiled) {
  clear_graph_cache();
  const std::vector<float> reference = lazy_losses(3);
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {  // flip a byte in every entry
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::streamoff>(f.tellg());
    f.seekp(size / 2);
    char c = 0;
    f.seekg(size / 2);
    f.read(&c, 1);
    f.seekp(size / 2);
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  clear_graph_cache();
  metrics::reset();
  const std::vector<float> again = lazy_losses(3);
  EXPECT_GT(metrics::counter("disk_cache_corrupt"), 0);
  EXPECT_GT(metrics::counter("llvm_compile"), 0);
  EXPECT_EQ(again, reference);
}

}  // namespace
}  // namespace lt
