// Prepared graphs by cache key, least recently used evicted first (LT_CACHE_SIZE entries).
#pragma once
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace lt::lazy {

/// Mixed into every cache key: what prepares and runs graphs (the reference interpreter, v1).
/// The compiler adds its options (opt level, fusion flags, CPU) here.
inline constexpr uint64_t kExecutorEnvironment = 0x696e7465727031ULL;

class GraphCache {
 public:
  explicit GraphCache(size_t capacity) : capacity_(capacity) {}
  /// The prepared graph for `key`, or null (and the entry becomes most recent).
  std::shared_ptr<rt::InterpretedGraph> find(uint64_t key);
  /// Prepares (verifies) and stores a graph; `cause` is what triggered it, for reports.
  std::shared_ptr<rt::InterpretedGraph> insert(uint64_t key, ir::Graph g, const std::string& cause);
  size_t size() const { return map_.size(); }
  /// The cached graphs, for recompile explanations.
  std::vector<const ir::Graph*> graphs() const;
  void clear();

 private:
  struct Entry {
    std::shared_ptr<rt::InterpretedGraph> exe;
    std::list<uint64_t>::iterator lru;
  };
  size_t capacity_;
  std::unordered_map<uint64_t, Entry> map_;
  std::list<uint64_t> lru_;  // front = most recent
};

GraphCache& graph_cache();

}  // namespace lt::lazy
