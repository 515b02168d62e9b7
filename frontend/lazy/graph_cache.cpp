#include "frontend/lazy/graph_cache.h"

#include "frontend/options/store.h"
#include "lt/metrics.h"

namespace lt::lazy {

std::shared_ptr<PreparedStep> GraphCache::find(uint64_t key) {
  auto it = map_.find(key);
  if (it == map_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.step;
}

void GraphCache::insert(uint64_t key, std::shared_ptr<PreparedStep> step) {
  if (auto it = map_.find(key); it != map_.end()) {
    it->second.step = std::move(step);
    return;
  }
  lru_.push_front(key);
  map_[key] = {std::move(step), lru_.begin()};
  while (map_.size() > capacity_) {
    map_.erase(lru_.back());
    lru_.pop_back();
    metrics::count("cache_evictions");
  }
}

std::vector<const ir::Graph*> GraphCache::graphs() const {
  std::vector<const ir::Graph*> out;
  for (uint64_t k : lru_) out.push_back(&map_.at(k).step->traced());
  return out;
}

void GraphCache::clear() {
  map_.clear();
  lru_.clear();
}

GraphCache& graph_cache() {
  static GraphCache cache(0);
  cache.set_capacity(static_cast<size_t>(options::number(options::Setting::CacheSize)));
  return cache;
}

}  // namespace lt::lazy
