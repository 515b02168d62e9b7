#include "frontend/lazy/donations.h"

#include <unordered_map>

namespace lt::lazy {

std::vector<long> owned_refs(const Cut& c) {
  if (c.donations.empty()) return {};
  std::vector<long> refs(c.params.size(), 0);
  std::unordered_map<const rt::Buffer*, int> donated;
  for (const ir::Donation& d : c.donations) {
    donated[c.params[d.param].get()] = d.param;
    refs[d.param] = 1;
  }
  std::unordered_map<const LazyNode*, bool> counted;  // materialized producers, counted once
  for (const LazyNode* n : c.order)
    for (const LazyInput& in : n->inputs) {
      if (!in.node) {
        if (auto it = donated.find(in.data.get()); it != donated.end()) ++refs[it->second];
        continue;
      }
      if (!materialized(in.node.get(), in.index) ||
          !counted.try_emplace(in.node.get(), true).second)
        continue;
      for (const rt::BufferPtr& b : in.node->results)
        if (auto it = donated.find(b.get()); it != donated.end()) ++refs[it->second];
    }
  return refs;
}

}  // namespace lt::lazy
