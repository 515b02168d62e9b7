// Prepared graphs by cache key (structural hash of the traced graph, its parameter order and
// donations, mixed with the compile environment), least recently used evicted first
// (LT_CACHE_SIZE entries).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "frontend/lazy/prepared_step.h"

namespace lt::lazy {

class GraphCache {
 public:
  explicit GraphCache(size_t capacity) : capacity_(capacity) {}
  /// Entries kept; a smaller capacity takes effect at the next insert.
  void set_capacity(size_t capacity) { capacity_ = capacity; }
  /// The prepared graph for `key`, or null (and the entry becomes most recent).
  std::shared_ptr<PreparedStep> find(uint64_t key);
  void insert(uint64_t key, std::shared_ptr<PreparedStep> step);
  size_t size() const { return map_.size(); }
  /// The cached graphs, for recompile explanations.
  std::vector<const ir::Graph*> graphs() const;
  void clear();

 private:
  struct Entry {
    std::shared_ptr<PreparedStep> step;
    std::list<uint64_t>::iterator lru;
  };
  size_t capacity_;
  std::unordered_map<uint64_t, Entry> map_;
  std::list<uint64_t> lru_;  // front = most recent
};

/// The process's cache, its capacity the setting LT_CACHE_SIZE.
GraphCache& graph_cache();

}  // namespace lt::lazy
