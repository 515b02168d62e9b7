// Replays saved fuzz inputs through the checks the fuzz targets run, built with the project's
// compiler: every crash input under tests/fuzz/regressions/<target>/ (each a bug found and fixed,
// see docs/RELIABILITY.md), and the seed corpora of the three cheap targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/check_failure.h"
#include "tests/fuzz/idx_check.h"
#include "tests/fuzz/ir_compile_check.h"
#include "tests/fuzz/ir_lower_check.h"
#include "tests/fuzz/safetensors_check.h"

namespace lt::fuzz {
namespace {

namespace fs = std::filesystem;

struct SavedInput {
  std::string target;  // fuzz_ir_lower, fuzz_ir_compile, fuzz_idx or fuzz_safetensors
  fs::path path;
};

std::vector<SavedInput> saved_inputs() {
  std::vector<SavedInput> out;
  const fs::path root = LT_FUZZ_DIR;
  auto add = [&](const char* target, const fs::path& dir) {
    if (!fs::is_directory(dir)) return;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().filename() != "README.md") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) out.push_back({target, f});
  };
  for (const char* t : {"fuzz_ir_lower", "fuzz_ir_compile", "fuzz_idx", "fuzz_safetensors"})
    add(t, root / "regressions" / t);
  add("fuzz_ir_lower", root / "corpus" / "fuzz_ir_lower");
  add("fuzz_idx", root / "corpus" / "fuzz_idx");
  add("fuzz_safetensors", root / "corpus" / "fuzz_safetensors");
  return out;
}

std::string test_name(const ::testing::TestParamInfo<SavedInput>& info) {
  std::string s = info.param.target.substr(5) + "_" + info.param.path.parent_path().parent_path()
                      .filename().string() + "_" + info.param.path.filename().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

class Replay : public ::testing::TestWithParam<SavedInput> {};

TEST_P(Replay, PassesItsCheck) {
  const SavedInput& in = GetParam();
  std::ifstream f(in.path, std::ios::binary);
  ASSERT_TRUE(f) << in.path;
  std::stringstream bytes;
  bytes << f.rdbuf();
  const std::string data = bytes.str();
  try {
    if (in.target == "fuzz_ir_lower") check_ir_lower(data);
    if (in.target == "fuzz_ir_compile") check_ir_compile(data);
    if (in.target == "fuzz_idx") check_idx(data);
    if (in.target == "fuzz_safetensors") check_safetensors(data);
  } catch (const CheckFailure& e) {
    FAIL() << in.path << ": " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Saved, Replay, ::testing::ValuesIn(saved_inputs()), test_name);

TEST(Replay, SeedCorporaArePresent) {
  const fs::path root = LT_FUZZ_DIR;
  for (const char* t : {"fuzz_ir_lower", "fuzz_ir_compile", "fuzz_idx", "fuzz_safetensors"})
    EXPECT_FALSE(fs::is_empty(root / "corpus" / t)) << t;
}

}  // namespace
}  // namespace lt::fuzz
