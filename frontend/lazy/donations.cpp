#include "frontend/lazy/donations.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

namespace lt::lazy {

std::vector<long> owned_refs(const Cut& c) {
  if (c.donations.empty()) return {};
  std::vector<long> refs(c.params.size(), 0);
  // Donated buffers, sorted for lookup (a step has hundreds: a hash map cost a heap node each).
  std::vector<std::pair<const rt::Buffer*, int>> donated;
  donated.reserve(c.donations.size());
  for (const ir::Donation& d : c.donations) {
    donated.push_back({c.params[d.param].get(), d.param});
    refs[d.param] = 1;
  }
  std::sort(donated.begin(), donated.end());
  auto count_ref = [&](const rt::Buffer* b) {
    auto it = std::lower_bound(donated.begin(), donated.end(), std::make_pair(b, -1));
    if (it != donated.end() && it->first == b) ++refs[it->second];
  };
  std::unordered_map<const LazyNode*, bool> counted;  // materialized producers, counted once
  for (const LazyNode* n : c.order)
    for (const LazyInput& in : n->inputs) {
      if (!in.node) {
        count_ref(in.data.get());
        continue;
      }
      if (!materialized(in.node.get(), in.index) ||
          !counted.try_emplace(in.node.get(), true).second)
        continue;
      for (const rt::BufferPtr& b : in.node->results) count_ref(b.get());
    }
  return refs;
}

}  // namespace lt::lazy
