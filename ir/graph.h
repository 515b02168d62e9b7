// The IR: an SSA graph of op nodes over graph parameters. Nodes live in a vector in topological
// order (trace order is one), and values are (definition, output) index pairs, so building,
// hashing and copying a graph touch no pointers.
#pragma once
#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/op.h"
#include "ir/shape.h"
#include "ir/type_list.h"

namespace lt::ir {

struct Value {
  int32_t def = 0;    // >= 0: node id; < 0: parameter number -(def + 1)
  int32_t index = 0;  // which output of the node

  static Value param(int p) { return {-(p + 1), 0}; }
  static Value node(int id, int index = 0) { return {id, index}; }
  bool is_param() const { return def < 0; }
  int param_index() const { return -def - 1; }
  auto operator<=>(const Value&) const = default;
};

struct Node {
  Op op;
  Attrs attrs;
  std::vector<Value> inputs;
  TypeList types;   // one per output
  std::string loc;   // "file:line" of the user call that traced it; not hashed
};

/// Whether running `n` checks its data and may throw (an id or label out of range, an integer
/// division by zero). Schedules run these before any in-place write, so a failed step leaves
/// every parameter as it was.
bool checks_data_at_run_time(const Node& n);

struct Param {
  std::string name;  // printed as %name; unique within the graph
  TensorType type;
};

/// Parameter `param`'s buffer may be reused for result `result` (an in-place update: the old
/// value is dead once the step ran). Part of the cache key; the buffer planner acts on it.
struct Donation {
  int param;
  int result;
  bool operator==(const Donation&) const = default;
};

class Graph {
 public:
  explicit Graph(std::string name = "main") : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  std::span<const Node> nodes() const { return nodes_; }
  std::span<const Param> params() const { return params_; }
  std::span<const Value> results() const { return results_; }
  const Node& node(int id) const { return nodes_[id]; }

  /// Adds a parameter; an empty name becomes "p<number>". Names are unique identifiers
  /// ([A-Za-z_][A-Za-z0-9_]*) so that the text form parses back; others are an InternalError.
  Value add_param(TensorType type, std::string name = "");
  /// Adds a node, inferring its output types with the op's rule (throws lt::TypeError).
  Value add(Op op, std::vector<Value> inputs, Attrs attrs, std::string loc = "");
  /// Adds a node with given output types (the parser; checked later by verify()).
  Value add_typed(Op op, std::vector<Value> inputs, Attrs attrs, TypeList types,
                  std::string loc = "");
  void set_results(std::vector<Value> results) { results_ = std::move(results); }
  std::span<const Donation> donations() const { return donations_; }
  void add_donation(Donation d) { donations_.push_back(d); }

  const TensorType& type(Value v) const;
  int num_outputs(int node_id) const { return static_cast<int>(nodes_[node_id].types.size()); }

 private:
  std::string name_;
  std::vector<Param> params_;
  std::vector<Node> nodes_;
  std::vector<Value> results_;
  std::vector<Donation> donations_;
};

/// The check an id-indexed op makes (embedding, embedding_grad, one_hot; gather, scatter and
/// scatter_add, whose limit is x's size on the axis): every element of `ids` in [0, limit), no
/// exception. Two nodes with the same check fail on exactly the same data, so once one has run,
/// the other cannot fail.
struct IdRangeCheck {
  Value ids;
  int64_t limit;
  auto operator<=>(const IdRangeCheck&) const = default;
};
std::optional<IdRangeCheck> id_range_check(const Graph& g, int id);

/// Values as dense indices: parameters first, then every output of every node in id order (for
/// per-value tables in passes).
class ValueIndex {
 public:
  explicit ValueIndex(const Graph& g);
  int operator()(Value v) const { return v.is_param() ? v.param_index() : first_[v.def] + v.index; }
  int size() const { return first_.back(); }

 private:
  std::vector<int> first_;
};

/// Text form (docs/IR.md): stable, and parse(print(g)) == g.
std::string print(const Graph& g);
/// Name of a value in the text form: "%x", "%3", "%3#1".
std::string value_name(const Graph& g, Value v);
/// One node as IR text ("%3 = add(%1, %2) : f32[4]"), for error messages and recompile reports.
std::string print_node(const Graph& g, int id);

/// Throws lt::Error naming the first malformed node: a use before definition, a bad output
/// index, or stored types that differ from the op's rule.
void verify(const Graph& g);

/// Structural hash: ops, attributes, dtypes, shapes, parameter types and wiring; never data,
/// names or source locations.
uint64_t structural_hash(const Graph& g);

}  // namespace lt::ir
