// PassLog runs the pipeline's passes one by one: it times each, re-verifies the graph after each
// when asked, and dumps the IR after each when given a directory. It reads no environment
// variables: the frontend turns LT_VERIFY / LT_DUMP_DIR into PassLogOptions.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace lt::passes {

struct PassLogOptions {
  bool verify = false;           ///< run ir::verify after every pass (tests always turn it on)
  std::string dump_dir;          ///< non-empty: write <dump_dir>/<prefix>-NN-<pass>.ir per pass
  std::string prefix = "graph";  ///< dump file prefix, such as the graph's hash
};

/// One pass as it ran.
struct PassRecord {
  std::string name;     ///< registry name
  int64_t ns = 0;       ///< wall time of the pass alone (not the verify or the dump)
  bool changed = false;
  int64_t nodes = 0;    ///< node count after the pass
};

class PassLog {
 public:
  explicit PassLog(PassLogOptions opt = {}) : opt_(std::move(opt)) {}

  /// Verifies g (always; throws lt::Error naming the first malformed node), records it as the
  /// pass "verify" and dumps g in full: the pipeline's input.
  void verify(const ir::Graph& g);
  /// Runs a pass from the registry under its registry name (an unregistered pass is an
  /// InternalError). Returns whether it changed the graph.
  bool run(ir::Graph& g, bool (*pass)(ir::Graph&));
  /// Runs `pass` under `name`, for passes that take options (wrapped in a lambda).
  bool run(std::string_view name, ir::Graph& g, const std::function<bool(ir::Graph&)>& pass);

  /// Every pass run so far, in order (for metrics).
  std::span<const PassRecord> records() const { return records_; }
  int64_t total_ns() const;
  /// Whether any pass changed the graph.
  bool changed() const;

 private:
  void dump(const ir::Graph& g, std::string_view name, bool changed);

  PassLogOptions opt_;
  std::vector<PassRecord> records_;
};

}  // namespace lt::passes
