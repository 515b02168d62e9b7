#include "passes/cse.h"

#include <bit>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/structural_hash.h"
#include "passes/graph_copy.h"

namespace lt::passes {
namespace {

// Where a future op with side effects (a collective, a host callback) must stay unmerged.
bool mergeable(ir::Op) { return true; }

template <class T>
bool same_field(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);  // -0.0 != 0.0, NaN == NaN
  } else {
    return a == b;
  }
}

bool same_attrs(const ir::Attrs& a, const ir::Attrs& b) {
  if (a.index() != b.index()) return false;
  return std::visit(
      [&](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b);
        constexpr size_t n = std::tuple_size_v<decltype(x.fields())>;
        return [&]<size_t... I>(std::index_sequence<I...>) {
          return (same_field(std::get<I>(x.fields()), std::get<I>(y.fields())) && ...);
        }(std::make_index_sequence<n>{});
      },
      a);
}

uint64_t key_hash(ir::Op op, const ir::Attrs& attrs, const std::vector<ir::Value>& inputs) {
  ir::Hasher h(static_cast<uint64_t>(op));
  h.add(ir::attrs_hash(attrs));
  for (ir::Value v : inputs) h.add(ir::value_key(v));
  return h.value();
}

bool same_node(const ir::Node& a, const ir::Node& b) {
  return a.op == b.op && a.inputs == b.inputs && a.types == b.types && same_attrs(a.attrs, b.attrs);
}

}  // namespace

bool cse(ir::Graph& g) {
  ir::Graph out = empty_copy(g);
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> new_id(n, -1);
  auto remap = [&](ir::Value v) { return renumbered(v, new_id); };
  // Hash -> ids in `out` with that hash; collisions are told apart by same_node.
  std::unordered_map<uint64_t, std::vector<int>> seen;
  seen.reserve(static_cast<size_t>(n));
  bool merged = false;
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    std::vector<ir::Value> ins;
    ins.reserve(node.inputs.size());
    for (ir::Value v : node.inputs) ins.push_back(remap(v));
    ir::Node cand{node.op, node.attrs, std::move(ins), node.types, node.loc};
    std::vector<int>* bucket = nullptr;
    if (mergeable(node.op)) {
      bucket = &seen[key_hash(cand.op, cand.attrs, cand.inputs)];
      for (int other : *bucket) {
        if (!same_node(out.node(other), cand)) continue;
        new_id[id] = other;
        break;
      }
      if (new_id[id] >= 0) {
        merged = true;
        continue;
      }
    }
    new_id[id] = out.add_typed(cand.op, std::move(cand.inputs), std::move(cand.attrs),
                               std::move(cand.types), std::move(cand.loc)).def;
    if (bucket) bucket->push_back(new_id[id]);
  }
  if (!merged) return false;
  replace_graph(g, std::move(out), new_id);
  return true;
}

}  // namespace lt::passes
