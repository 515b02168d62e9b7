#include "frontend/lazy/graph_agreement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/object_cache.h"
#include "frontend/options/store.h"
#include "ir/error.h"
#include "lt/metrics.h"
#include "runtime/comm/communicator.h"

namespace lt::lazy {
namespace {

bool has_collective(const ir::Graph& g) {
  return std::any_of(g.nodes().begin(), g.nodes().end(), [](const ir::Node& n) {
    return ir::info(n.op).family == ir::OpFamily::Collective;
  });
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return lines;
}

template <class T>
std::vector<T> gather(rt::comm::Communicator& world, const T& mine, uint64_t hash) {
  std::vector<T> all(static_cast<size_t>(world.size()));
  if (!world.control_all_gather(&mine, all.data(), sizeof(T), kAgreementTimeoutSeconds))
    throw Error(fmt::format(
        "rank {} traced a new step graph with collectives (hash {:016x}) and the other ranks "
        "did not reach the same point within {} s: the ranks run different steps",
        world.rank(), hash, kAgreementTimeoutSeconds));
  return all;
}

}  // namespace

bool check_graph_agreement(const ir::Graph& g, uint64_t hash) {
  rt::comm::Communicator& world = rt::comm::world();
  if (world.size() == 1 || !has_collective(g)) return false;
  metrics::count("graph_agreements");
  const std::vector<uint64_t> hashes = gather(world, hash, hash);
  if (std::all_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h == hashes[0]; }))
    return true;
  // They differ: every rank is here, so every rank exchanges its IR and reports the same error.
  const std::string text = ir::print(g);
  const std::vector<int64_t> sizes = gather(world, static_cast<int64_t>(text.size()), hash);
  const int64_t longest = *std::max_element(sizes.begin(), sizes.end());
  std::string padded = text;
  padded.resize(static_cast<size_t>(longest));
  std::string all(static_cast<size_t>(longest * world.size()), '\0');
  if (!world.control_all_gather(padded.data(), all.data(), longest, kAgreementTimeoutSeconds))
    throw Error("ranks traced different step graphs (the IR exchange timed out)");
  auto text_of = [&](int r) {
    return all.substr(static_cast<size_t>(r * longest), static_cast<size_t>(sizes[r]));
  };
  const int other = static_cast<int>(
      std::find_if(hashes.begin(), hashes.end(), [&](uint64_t h) { return h != hashes[0]; }) -
      hashes.begin());
  std::vector<int> same, differ;
  for (int r = 0; r < world.size(); ++r) (hashes[r] == hashes[0] ? same : differ).push_back(r);
  const std::vector<std::string> a = lines_of(text_of(0)), b = lines_of(text_of(other));
  size_t line = 0;
  while (line < a.size() && line < b.size() && a[line] == b[line]) ++line;
  auto at = [](const std::vector<std::string>& v, size_t i) {
    return i < v.size() ? v[i] : std::string("(end of graph)");
  };
  throw Error(fmt::format(
      "ranks traced different step graphs: rank 0 {:016x} (ranks {}), rank {} {:016x} (ranks "
      "{}); first difference at line {}:\n  rank 0: {}\n  rank {}: {}",
      hashes[0], same, other, hashes[other], differ, line + 1, at(a, line), other,
      at(b, line)));
}

namespace {

// Whether every rank succeeded, gathered on the control channel. Throws on every rank when one
// failed (this rank's own `error` first) or did not arrive in time; `stage` says what they did.
void all_ok(rt::comm::Communicator& world, const std::string& error, uint64_t key,
            const char* stage) {
  const int32_t failed = error.empty() ? 0 : 1;
  std::vector<int32_t> all(static_cast<size_t>(world.size()));
  if (!world.control_all_gather(&failed, all.data(), sizeof failed, kSharedCompileTimeoutSeconds))
    throw Error(fmt::format("rank {}: the ranks {} step graph {:016x} did not finish within {} s",
                            world.rank(), stage, key, kSharedCompileTimeoutSeconds));
  if (!error.empty()) throw Error(error);
  for (int r = 0; r < world.size(); ++r)
    if (all[r]) throw Error(fmt::format("rank {} failed {} step graph {:016x}", r, stage, key));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  if (!f) throw Error(fmt::format("cannot read the compiled object {}", path));
  return s.str();
}

// Rank 0's object file, broadcast to every rank; the first rank of each other host puts it into
// its own disk cache under the same name. "" or what went wrong on this rank.
std::string send_object_to_other_hosts(rt::comm::Communicator& world, const PreparedStep* step,
                                       uint64_t key) {
  std::string name, bytes, error;
  if (world.rank() == 0 && step && !step->object_file().empty()) {
    try {
      bytes = read_file(step->object_file());
      name = std::filesystem::path(step->object_file()).filename().string();
    } catch (const Error& e) {
      bytes.clear();  // the others still take part in the broadcasts, of nothing
      error = e.what();
    }
  }
  int64_t sizes[2] = {static_cast<int64_t>(name.size()), static_cast<int64_t>(bytes.size())};
  auto broadcast = [&](void* data, int64_t n) {
    if (n > 0 && !world.control_broadcast(data, n, 0, kSharedCompileTimeoutSeconds))
      throw Error(fmt::format("rank {}: rank 0 did not send the object of step graph {:016x} "
                              "within {} s", world.rank(), key, kSharedCompileTimeoutSeconds));
  };
  broadcast(sizes, sizeof sizes);
  name.resize(static_cast<size_t>(sizes[0]));
  bytes.resize(static_cast<size_t>(sizes[1]));
  broadcast(name.data(), sizes[0]);
  broadcast(bytes.data(), sizes[1]);
  if (world.rank() == 0 || world.local_rank() != 0 || name.empty()) return error;
  const std::string dir = options::text(options::Setting::CacheDir);
  const std::string why = codegen::install_object_cache_entry(dir + "/" + name, bytes);
  return why.empty() ? "" : fmt::format("cannot write {}/{}: {}", dir, name, why);
}

}  // namespace

std::shared_ptr<PreparedStep> prepare_on_every_rank(ir::Graph g, const CompileOptions& o,
                                                    uint64_t key) {
  rt::comm::Communicator& world = rt::comm::world();
  if (!o.disk_cache || o.opt_level < 1) return PreparedStep::prepare(std::move(g), o, key);
  // On one host its first rank compiles. On several, rank 0 compiles and sends the object to
  // the other hosts' first ranks, which put it into their disk caches: LLVM runs once per job.
  const bool several_hosts = world.local_size() < world.size();
  const bool compiles = several_hosts ? world.rank() == 0 : world.local_rank() == 0;
  std::shared_ptr<PreparedStep> step;
  std::string error;
  if (compiles) {
    try {
      step = PreparedStep::prepare(g, o, key);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  all_ok(world, error, key, "compiling");
  if (several_hosts)
    all_ok(world, send_object_to_other_hosts(world, step.get(), key), key,
           "sharing the object of");
  if (!compiles) step = PreparedStep::prepare(std::move(g), o, key);  // objects from the disk
  return step;
}

}  // namespace lt::lazy
