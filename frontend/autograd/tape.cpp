// Recording onto the autograd tape: the node's edges and snapshots, shared by ops and custom
// functions.
#include <string>

#include "frontend/autograd/grad_node.h"
#include "frontend/tensor_impl.h"
#include "frontend/views.h"

namespace lt {

std::string node_name(const GradNode& n) {
  return n.custom ? n.custom->name : std::string(ir::mnemonic(n.op));
}

void record_node(std::shared_ptr<GradNode> node, std::span<const Tensor> inputs,
                 std::span<Tensor> outputs) {
  node->edges.reserve(inputs.size());
  node->inputs.reserve(inputs.size());
  node->outputs.reserve(outputs.size());
  node->input_versions.reserve(inputs.size());
  node->output_versions.reserve(outputs.size());
  bool any = false;
  for (const Tensor& x : inputs) {
    GradEdge e;
    TensorImpl* xi = x.impl();
    if (xi->requires_grad) {
      any = true;
      if (xi->grad_fn) {
        e.node = xi->grad_fn;
        e.output_nr = xi->output_nr;
      } else {
        e.leaf = x.impl_ptr();
      }
    }
    node->edges.push_back(std::move(e));
    node->inputs.push_back(snapshot(x));
    const std::shared_ptr<VersionCounter>& c = version_counter(*xi);
    node->input_versions.push_back({c, c->value});
  }
  if (!any) return;
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->outputs.push_back(snapshot(outputs[i]));
    TensorImpl* oi = outputs[i].impl();
    const std::shared_ptr<VersionCounter>& c = version_counter(*oi);
    node->output_versions.push_back({c, c->value});
    oi->requires_grad = true;
    oi->grad_fn = node;
    oi->output_nr = static_cast<int>(i);
  }
}

}  // namespace lt
