#include "ir/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>

#include "ir/error.h"
#include "ir/structural_hash.h"
#include "ir/type_rules.h"

namespace lt::ir {

Value Graph::add_param(TensorType type, std::string name) {
  // Names must stay unique identifiers, or print() would write text that parse() rejects; a
  // default "p<number>" skips past any explicit name that already took it.
  auto taken = [&](const std::string& n) {
    return std::any_of(params_.begin(), params_.end(), [&](const Param& p) { return p.name == n; });
  };
  if (name.empty()) {
    for (size_t i = params_.size(); name.empty() || taken(name); ++i) name = fmt::format("p{}", i);
  }
  const bool ident = (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                     std::all_of(name.begin(), name.end(), [](char c) {
                       return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                     });
  LT_CHECK(ident, "parameter name '{}' is not an identifier", name);
  LT_CHECK(!taken(name), "duplicate parameter name '{}'", name);
  params_.push_back({std::move(name), std::move(type)});
  return Value::param(static_cast<int>(params_.size()) - 1);
}

Value Graph::add(Op op, std::vector<Value> inputs, Attrs attrs, std::string loc) {
  std::vector<TensorType> in;
  in.reserve(inputs.size());
  for (Value v : inputs) in.push_back(type(v));
  TypeList out = infer_types(op, in, attrs);
  return add_typed(op, std::move(inputs), std::move(attrs), std::move(out), std::move(loc));
}

Value Graph::add_typed(Op op, std::vector<Value> inputs, Attrs attrs, TypeList types,
                       std::string loc) {
  nodes_.push_back({op, std::move(attrs), std::move(inputs), std::move(types), std::move(loc)});
  return Value::node(static_cast<int>(nodes_.size()) - 1);
}

const TensorType& Graph::type(Value v) const {
  if (v.is_param()) {
    LT_CHECK(v.param_index() < static_cast<int>(params_.size()), "parameter {} out of range",
             v.param_index());
    return params_[v.param_index()].type;
  }
  LT_CHECK(v.def < static_cast<int>(nodes_.size()) && v.index < num_outputs(v.def),
           "value %{}#{} out of range", v.def, v.index);
  return nodes_[v.def].types[v.index];
}

ValueIndex::ValueIndex(const Graph& g) {
  first_.reserve(g.nodes().size() + 1);
  int next = static_cast<int>(g.params().size());
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    first_.push_back(next);
    next += g.num_outputs(id);
  }
  first_.push_back(next);
}

bool checks_data_at_run_time(const Node& n) { return checks_data(n.op, n.types[0].dtype); }

std::optional<IdRangeCheck> id_range_check(const Graph& g, int id) {
  const Node& n = g.node(id);
  if (n.op == Op::Embedding) return IdRangeCheck{n.inputs[1], g.type(n.inputs[0]).shape[0]};
  if (n.op == Op::EmbeddingGrad)
    return IdRangeCheck{n.inputs[1], std::get<EmbeddingGradAttrs>(n.attrs).num_weights};
  if (n.op == Op::OneHot)
    return IdRangeCheck{n.inputs[0], std::get<OneHotAttrs>(n.attrs).num_classes};
  if (n.op == Op::Gather || n.op == Op::Scatter || n.op == Op::ScatterAdd) {
    const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
    return IdRangeCheck{n.inputs[1], g.type(n.inputs[0]).shape[axis]};
  }
  return std::nullopt;
}

void verify(const Graph& g) {
  const int np = static_cast<int>(g.params().size());
  auto check_value = [&](Value v, int before, const std::string& where) {
    const bool ok = v.is_param() ? v.param_index() < np
                                 : v.def < before && v.index >= 0 && v.index < g.num_outputs(v.def);
    if (!ok)
      throw Error(fmt::format("verify: {} uses an undefined value (def {}, output {})", where,
                              v.def, v.index));
  };
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id) {
    const Node& n = g.node(id);
    std::vector<TensorType> in;
    for (Value v : n.inputs) {
      check_value(v, id, fmt::format("node %{}", id));
      in.push_back(g.type(v));
    }
    TypeList want;
    try {
      want = infer_types(n.op, in, n.attrs);
    } catch (const TypeError& e) {
      throw Error(fmt::format("verify: {}: {}", print_node(g, id), e.what()));
    }
    if (want != n.types) {
      std::string w;
      for (const auto& t : want) w += (w.empty() ? "" : ", ") + type_str(t);
      throw Error(fmt::format("verify: {}: the op's rule gives {}", print_node(g, id), w));
    }
  }
  for (Value v : g.results()) check_value(v, static_cast<int>(g.nodes().size()), "return");
  std::vector<bool> donated(g.params().size()), filled(g.results().size());
  for (const Donation& d : g.donations()) {
    if (d.param < 0 || d.param >= np || d.result < 0 ||
        d.result >= static_cast<int>(g.results().size()))
      throw Error(fmt::format("verify: donation of parameter {} to result {} is out of range",
                              d.param, d.result));
    if (donated[d.param] || filled[d.result])
      throw Error(
          fmt::format("verify: parameter {} or result {} is donated twice", d.param, d.result));
    if (g.params()[d.param].type.bytes() != g.type(g.results()[d.result]).bytes())
      throw Error(fmt::format("verify: parameter {} ({}) cannot hold result {} ({})", d.param,
                              type_str(g.params()[d.param].type), d.result,
                              type_str(g.type(g.results()[d.result]))));
    donated[d.param] = filled[d.result] = true;
  }
}

uint64_t structural_hash(const Graph& g) {
  StructuralHasher h;
  for (const Node& n : g.nodes()) h.node(n.op, n.attrs, n.inputs, n.types);
  h.results(g.results());
  h.donations(g.donations());
  return h.finish(g.params().size(),
                  [&](size_t p) -> const TensorType& { return g.params()[p].type; });
}

}  // namespace lt::ir
