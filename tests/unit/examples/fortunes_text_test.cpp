// char_gpt's text pipeline: fortunes split at "%" lines, a seeded split by whole fortunes, next-
// byte windows and the unigram entropy, against values worked out by hand.
#include "examples/fortunes_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/error_of.h"
#include "tests/support/scratch_dir.h"

namespace lt::examples {
namespace {

using lt::testing::error_of;
using lt::testing::ScratchDir;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// The fortunes of a joined text (each ends with "%\n").
std::multiset<std::string> fortunes_in(const std::string& joined) {
  std::multiset<std::string> out;
  std::istringstream in(joined);
  std::string line, current;
  while (std::getline(in, line)) {
    if (line == "%") {
      out.insert(current);
      current.clear();
    } else {
      current += line + "\n";
    }
  }
  EXPECT_EQ(current, "") << "text does not end with %\\n";
  return out;
}

TEST(Fortunes, SplitsWholeFortunesAndSkipsIndexesAndLinks) {
  ScratchDir d;
  write(d.path("a"), "one\n%\ntwo\nlines\n%\n   \n%\nthree");  // blank fortune dropped
  write(d.path("b"), "four\n%\nfive\n%\n");
  write(d.path("a.dat"), "ignored\n%\nindex\n");
  std::filesystem::create_symlink(d.path("b"), d.path("b.u8"));
  const FortuneSplit s = load_fortunes(d.str(), 7, 0.4);
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.train_fortunes, 3);
  EXPECT_EQ(s.validation_fortunes, 2);
  std::multiset<std::string> all = fortunes_in(s.train);
  const std::multiset<std::string> val = fortunes_in(s.validation);
  EXPECT_EQ(all.size(), 3u);
  EXPECT_EQ(val.size(), 2u);
  all.insert(val.begin(), val.end());
  EXPECT_EQ(all, (std::multiset<std::string>{"one\n", "two\nlines\n", "three\n", "four\n",
                                             "five\n"}));
}

TEST(Fortunes, SeedFixesTheSplit) {
  ScratchDir d;
  std::string text;
  for (int i = 0; i < 40; ++i) text += "fortune " + std::to_string(i) + "\n%\n";
  write(d.path("f"), text);
  const FortuneSplit a = load_fortunes(d.str(), 1), b = load_fortunes(d.str(), 1);
  const FortuneSplit c = load_fortunes(d.str(), 2);
  EXPECT_EQ(a.validation, b.validation);
  EXPECT_EQ(a.train, b.train);
  EXPECT_NE(a.validation, c.validation);
  EXPECT_EQ(a.validation_fortunes, 4);
}

TEST(Fortunes, MissingOrEmptyDirectoryIsNamed) {
  EXPECT_EQ(error_of([] { load_fortunes("/nonexistent/fortunes", 0); }),
            "fortune directory '/nonexistent/fortunes' does not exist (install Debian's fortunes "
            "package, or pass --data-dir)");
  ScratchDir d;
  write(d.path("only"), "one fortune\n");
  EXPECT_EQ(error_of([&] { load_fortunes(d.str(), 0); }),
            "fortune directory '" + d.str() + "' holds 1 fortunes; need at least 2");
}

TEST(ByteWindows, InputsAndNextBytes) {
  const data::TensorDataset w = byte_windows("abcdefg", 3);  // (7 - 1) / 3 = 2 windows
  ASSERT_EQ(w.images.shape(), (Shape{2, 3}));
  EXPECT_EQ(w.images.dtype(), DType::I64);
  EXPECT_EQ(w.images.to_vector<int64_t>(), (std::vector<int64_t>{'a', 'b', 'c', 'd', 'e', 'f'}));
  EXPECT_EQ(w.labels.to_vector<int64_t>(), (std::vector<int64_t>{'b', 'c', 'd', 'e', 'f', 'g'}));
  EXPECT_EQ(byte_windows("\xff\x80", 1).images.to_vector<int64_t>(),
            (std::vector<int64_t>{255}));
  EXPECT_EQ(error_of([] { byte_windows("abc", 3); }),
            "a text of 3 bytes holds no window of 3 + 1 bytes");
}

TEST(UnigramEntropy, MatchesHandComputedValues) {
  EXPECT_DOUBLE_EQ(unigram_entropy("aaaa"), 0);
  EXPECT_NEAR(unigram_entropy("abab"), std::log(2.0), 1e-15);
  // p = 1/2, 1/4, 1/4: H = 1.5 bits.
  EXPECT_NEAR(unigram_entropy("aabc"), 1.5 * std::log(2.0), 1e-15);
}

}  // namespace
}  // namespace lt::examples
