#include "frontend/lazy/dumps.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "frontend/options/store.h"
#include "ir/dot.h"
#include "runtime/comm/communicator.h"

namespace lt::lazy {

std::string dump_dir() {
  std::string dir = options::text(options::Setting::DumpDir);
  // The ranks of a replicated job dump the same graphs under the same names: one folder each.
  const rt::comm::Communicator& world = rt::comm::world();
  if (!dir.empty() && world.size() > 1) dir += fmt::format("/rank{}", world.rank());
  return dir;
}

void dump_traced(const ir::Graph& g, uint64_t key, int64_t seq) {
  const std::string dir = dump_dir();
  if (dir.empty()) return;
  std::filesystem::create_directories(dir);
  const std::string stem = fmt::format("{}/{:04}-{:016x}", dir, seq, key);
  std::ofstream(stem + ".traced.ir") << ir::print(g);
  std::ofstream(stem + ".dot") << ir::to_dot(g);
}

}  // namespace lt::lazy
