#include "frontend/lazy/graph_agreement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

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

void check_graph_agreement(const ir::Graph& g, uint64_t hash) {
  rt::comm::Communicator& world = rt::comm::world();
  if (world.size() == 1 || !has_collective(g)) return;
  metrics::count("graph_agreements");
  const std::vector<uint64_t> hashes = gather(world, hash, hash);
  if (std::all_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h == hashes[0]; }))
    return;
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

}  // namespace lt::lazy
