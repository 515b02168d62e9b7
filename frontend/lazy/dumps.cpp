#include "frontend/lazy/dumps.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "frontend/options/store.h"
#include "ir/dot.h"

namespace lt::lazy {

std::string dump_dir() { return options::text(options::Setting::DumpDir); }

void dump_traced(const ir::Graph& g, uint64_t key, int64_t seq) {
  const std::string dir = dump_dir();
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  const std::string stem = fmt::format("{}/{:04}-{:016x}", dir, seq, key);
  std::ofstream(stem + ".traced.ir") << ir::print(g);
  std::ofstream(stem + ".dot") << ir::to_dot(g);
}

}  // namespace lt::lazy
