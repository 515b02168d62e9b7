#include "frontend/lazy/dumps.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/dot.h"

namespace lt::lazy {

const std::string& dump_dir() {
  static const std::string dir = [] {
    const char* d = std::getenv("LT_DUMP_DIR");
    return std::string(d ? d : "");
  }();
  return dir;
}

void dump_traced(const ir::Graph& g, uint64_t key, int64_t seq) {
  const std::string& dir = dump_dir();
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  const std::string stem = fmt::format("{}/{:04}-{:016x}", dir, seq, key);
  std::ofstream(stem + ".traced.ir") << ir::print(g);
  std::ofstream(stem + ".dot") << ir::to_dot(g);
}

}  // namespace lt::lazy
