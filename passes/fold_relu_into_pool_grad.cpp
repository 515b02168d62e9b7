#include "passes/fold_relu_into_pool_grad.h"

#include <cmath>
#include <variant>
#include <vector>

#include "ir/op.h"
#include "passes/graph_copy.h"
#include "passes/rewrite.h"

namespace lt::passes {
namespace {

using ir::Graph;
using ir::Value;

bool is_plus_zero(const Graph& g, Value v) {
  const std::optional<double> s = splat_value(g, v);
  return s && *s == 0 && !std::signbit(*s);
}

// a for relu(a), else v itself.
Value before_relu(const Graph& g, Value v) {
  const ir::Node* p = producer(g, v);
  return p && p->op == ir::Op::Relu ? p->inputs[0] : v;
}

// The max_pool2d_grad node that the where node `id` folds into, or -1.
int pool_grad_to_fold(const Graph& g, int id, const std::vector<int>& uses) {
  const ir::Node& w = g.node(id);
  if (w.op != ir::Op::Where) return -1;
  const ir::Node* cond = producer(g, w.inputs[0]);
  const ir::Node* grad = producer(g, w.inputs[1]);
  if (!cond || cond->op != ir::Op::Gt || !grad || grad->op != ir::Op::MaxPool2dGrad) return -1;
  if (std::get<ir::PoolAttrs>(grad->attrs).through_relu || uses[w.inputs[1].def] != 1) return -1;
  if (!is_plus_zero(g, w.inputs[2]) || !is_plus_zero(g, cond->inputs[1])) return -1;
  // Shapes equal: the where neither broadcasts the gradient nor the mask.
  if (w.types[0] != g.type(w.inputs[1]) || g.type(w.inputs[0]).shape != w.types[0].shape)
    return -1;
  if (before_relu(g, cond->inputs[0]) != before_relu(g, grad->inputs[0])) return -1;
  return w.inputs[1].def;
}

}  // namespace

bool fold_relu_into_pool_grad(Graph& g) {
  const int n = static_cast<int>(g.nodes().size());
  std::vector<int> uses(n, 0);  // readers of each node's output 0
  auto use = [&](Value v) {
    if (!v.is_param() && v.index == 0) ++uses[v.def];
  };
  for (const ir::Node& node : g.nodes())
    for (Value v : node.inputs) use(v);
  for (Value v : g.results()) use(v);
  std::vector<int> folded_into(n, -1);  // per where node: the pool gradient that replaces it
  std::vector<char> relu_grad(n, 0);    // per pool gradient: it takes through_relu
  bool any = false;
  for (int id = 0; id < n; ++id)
    if (const int p = pool_grad_to_fold(g, id, uses); p >= 0) {
      folded_into[id] = p;
      relu_grad[p] = 1;
      any = true;
    }
  if (!any) return false;

  Graph out = empty_copy(g);
  std::vector<int> new_id(n, -1);
  for (int id = 0; id < n; ++id) {
    const ir::Node& node = g.node(id);
    if (folded_into[id] >= 0) {
      new_id[id] = new_id[folded_into[id]];
      continue;
    }
    std::vector<Value> ins;
    for (Value v : node.inputs) ins.push_back(renumbered(v, new_id));
    ir::Attrs attrs = node.attrs;
    if (relu_grad[id]) std::get<ir::PoolAttrs>(attrs).through_relu = true;
    new_id[id] =
        out.add_typed(node.op, std::move(ins), std::move(attrs), node.types, node.loc).def;
  }
  replace_graph(g, std::move(out), new_id);
  return true;
}

}  // namespace lt::passes
