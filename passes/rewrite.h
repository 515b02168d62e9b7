// The fixed-point driver for local rewrites (canonicalize, fold): a rule is an {op, fn} row, tried
// on every live node until no rule fires. Each sweep rebuilds the graph once, in O(nodes).
#pragma once
#include <optional>
#include <span>
#include <vector>

#include "ir/graph.h"

namespace lt::passes {

/// Lets a rule add nodes. Rules read the graph under construction, in which every producer of the
/// node being rewritten is already in its rewritten form. Added nodes are appended when the rule
/// returns: after the node being rewritten (which the replacement makes dead) and before any of
/// its users. So references into the graph stay valid while a rule builds, but a value from add()
/// has no node yet: ask this builder, not the graph, for its type.
class RewriteBuilder {
 public:
  RewriteBuilder(const ir::Graph& g, int node_id) : g_(g), node_id_(node_id) {}

  /// Adds a node with output types from the op's rule; an ill-typed node is an InternalError (a
  /// bug in the rule). Returns its output 0.
  ir::Value add(ir::Op op, std::vector<ir::Value> inputs, ir::Attrs attrs);
  /// Type of a value of the graph or of a node added here.
  const TensorType& type(ir::Value v) const;

  /// For the driver: the nodes added, in order (their loc is the rewritten node's).
  std::vector<ir::Node> take() { return std::move(pending_); }
  bool empty() const { return pending_.empty(); }

 private:
  const ir::Graph& g_;
  int node_id_;
  std::vector<ir::Node> pending_;
};

/// A rule: the value that replaces output 0 of node `node_id` of `g`, or nullopt when it does not
/// apply. The replacement must have the node's output type.
using RewriteFn = std::optional<ir::Value> (*)(const ir::Graph& g, int node_id, RewriteBuilder& b);

struct RewriteRule {
  ir::Op op;
  RewriteFn fn;
};

/// Applies `rules` until none fires: uses of a rewritten node's output 0 go to the replacement,
/// and a replacement that is a new node is rewritten in turn. Rules of one op are tried in table
/// order. Returns true if any rule fired; then the nodes left dead are dropped as dce() would.
/// Parameters (names kept), result count and order, and donations do not change. Returns false
/// and leaves the graph untouched when no rule fires.
bool rewrite_to_fixpoint(ir::Graph& g, std::span<const RewriteRule> rules);

// Helpers for rules.

/// The node that defines v, or null when v is a parameter.
const ir::Node* producer(const ir::Graph& g, ir::Value v);

/// The rule reshape(reshape(x)) -> reshape(x) and expand(expand(x)) -> expand(x) (x itself when
/// that is its shape): both views keep row-major element order (reshape) or broadcast
/// transitively (expand), so the inner one is moot.
std::optional<ir::Value> view_of_same_view(const ir::Graph& g, int node_id, RewriteBuilder& b);

/// Whether a view of a splat (every element one value) is a splat of the same value: reshape,
/// permute, expand and slice, whose elements are all elements of their operand.
bool keeps_splats(ir::Op op);

/// The value every element of v holds when v is a `full` (seen through views that keep splats),
/// as its dtype stores it (see to_dtype); nullopt otherwise.
std::optional<double> splat_value(const ir::Graph& g, ir::Value v);

/// v as an element of dtype t holds it, following the kernels' conversion: f32 rounds to
/// nearest, integers truncate toward zero, bool is `v != 0` (NaN is true). Nullopt where an
/// integer cannot hold v (NaN or out of range: integer arithmetic wraps there, casts saturate)
/// and for the f16/bf16 storage types.
std::optional<double> to_dtype(double v, DType t);

}  // namespace lt::passes
