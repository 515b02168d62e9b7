// Seeded random graphs for the differential test (tests/diff/random_graph_test.cpp): DAGs of
// elementwise, view, reduce, matmul, softmax and creation ops over broadcasting shapes, with
// parameter data, and for every result a bound on how far a compiled run may drift from the
// reference interpreter. Many independent DAGs can share one graph, so one compile covers many.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "runtime/buffer.h"

namespace lt::testing {

/// One result of a random DAG.
struct RandomResult {
  ir::Value value;
  uint64_t dag_seed = 0;
  int index_in_dag = 0;
  /// Bound on |compiled - reference| over the finite elements (float results), from first-order
  /// error propagation: 0 when every op on the way is exactly rounded (+ - * / max min where
  /// cast view ...), so both runs must agree bit for bit up to the sign of zero. NaN and inf sit
  /// at the same positions in both runs; integer and bool results always agree exactly.
  double max_error = 0;
  /// A parameter donated to this result (ir::Donation), or -1.
  int donor = -1;
};

struct RandomDagOptions {
  int min_ops = 5, max_ops = 60;  ///< nodes the DAG adds (domain guards and clamps count)
};

/// A graph holding one or more independently seeded random DAGs, with their parameter data.
/// The same seed always draws the same DAG and the same data, alone or next to other DAGs.
class RandomGraph {
 public:
  explicit RandomGraph(std::string name = "random") : graph_(std::move(name)) {}

  /// Appends the DAG drawn from `seed`; its results join the graph's results.
  void add_dag(uint64_t seed, const RandomDagOptions& options = {});

  const ir::Graph& graph() const { return graph_; }
  /// One buffer per graph parameter, in parameter order.
  std::span<const std::shared_ptr<rt::Buffer>> params() const { return params_; }
  /// One entry per graph result, in result order.
  std::span<const RandomResult> results() const { return results_; }
  /// The seed of the DAG that drew each parameter.
  std::span<const uint64_t> param_seeds() const { return param_seeds_; }

 private:
  ir::Graph graph_;
  std::vector<std::shared_ptr<rt::Buffer>> params_;
  std::vector<RandomResult> results_;
  std::vector<uint64_t> param_seeds_;
};

/// Buffer contents as text, "[1.5, -0, inf, nan]", at most `limit` elements (then ", ...").
/// Floats print in shortest round-trip form, so the text gives the same data back.
std::string buffer_str(const TensorType& t, const rt::Buffer& b, int64_t limit = 64);
/// The numbers of the line "// %name = [v, ...]" in `text` (strtod spellings: inf, -inf, nan,
/// -0), or none: parameter data next to a graph's text in a repro file.
std::vector<double> param_values(std::string_view text, std::string_view name);
/// A buffer of type t holding `values`, cycled (none: a fixed pattern); integers as a cast
/// converts them (inf, NaN and values past the range too).
std::shared_ptr<rt::Buffer> buffer_from(const TensorType& t, std::span<const double> values);

}  // namespace lt::testing
