#include "examples/fortunes_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "lt/lt.h"

namespace lt::examples {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> fortunes_of(const std::string& text) {
  std::vector<std::string> out;
  std::string current, line;
  std::istringstream in(text);
  auto flush = [&] {
    if (current.find_first_not_of(" \t\r\n") != std::string::npos) out.push_back(current);
    current.clear();
  };
  while (std::getline(in, line)) {
    if (line == "%") flush();
    else current += line + "\n";
  }
  flush();
  return out;
}

}  // namespace

FortuneSplit load_fortunes(const std::string& dir, uint64_t seed, double validation_fraction) {
  if (!(validation_fraction > 0 && validation_fraction < 1))
    throw InputError(fmt::format("validation fraction {} is not in (0, 1)", validation_fraction));
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format(
        "fortune directory '{}' does not exist (install Debian's fortunes package, or pass "
        "--data-dir)",
        dir));
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && !e.is_symlink() && ext != ".dat" && ext != ".u8")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> fortunes;
  for (const fs::path& p : files) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in && !in.eof())
      throw InputError(fmt::format("cannot read fortune file '{}'", p.string()));
    for (std::string& f : fortunes_of(text.str())) fortunes.push_back(std::move(f));
  }
  if (fortunes.size() < 2)
    throw InputError(fmt::format("fortune directory '{}' holds {} fortunes; need at least 2", dir,
                                 fortunes.size()));
  const auto n = static_cast<int64_t>(fortunes.size());
  const std::vector<int64_t> order = data::shuffled_indices(n, seed, 0);
  const int64_t n_val = std::clamp<int64_t>(
      static_cast<int64_t>(std::llround(validation_fraction * static_cast<double>(n))), 1, n - 1);
  FortuneSplit s;
  s.files = static_cast<int64_t>(files.size());
  for (int64_t i = 0; i < n; ++i) {
    std::string& text = i < n - n_val ? s.train : s.validation;
    text += fortunes[static_cast<size_t>(order[static_cast<size_t>(i)])];
    text += "%\n";
  }
  s.train_fortunes = n - n_val;
  s.validation_fortunes = n_val;
  return s;
}

data::TensorDataset byte_windows(const std::string& text, int64_t context) {
  if (context < 1) throw InputError(fmt::format("context {} is not positive", context));
  const int64_t n = text.size() > 1 ? (static_cast<int64_t>(text.size()) - 1) / context : 0;
  if (n == 0)
    throw InputError(fmt::format("a text of {} bytes holds no window of {} + 1 bytes",
                                 text.size(), context));
  std::vector<int64_t> inputs(static_cast<size_t>(n * context)), next(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = static_cast<unsigned char>(text[i]);
    next[i] = static_cast<unsigned char>(text[i + 1]);
  }
  return {from_vector(inputs, {n, context}), from_vector(next, {n, context})};
}

double unigram_entropy(const std::string& text) {
  std::array<double, 256> count{};
  for (const char ch : text) count[static_cast<unsigned char>(ch)] += 1;
  double h = 0;
  const auto total = static_cast<double>(text.size());
  for (const double c : count)
    if (c > 0) h -= c / total * std::log(c / total);
  return h;
}

}  // namespace lt::examples
