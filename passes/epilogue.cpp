#include "passes/epilogue.h"

#include <algorithm>
#include <vector>

namespace lt::passes {
namespace {

using ir::LoopRole;
using ir::Value;

// Whether loop group `grp` can follow library node `lib` as its epilogue.
bool fits_epilogue(const ir::Graph& g, const ir::FusionGroup& grp, int lib) {
  if (grp.kind != ir::KernelKind::Loop || grp.shape != g.node(lib).types[0].shape) return false;
  const std::vector<LoopRole> roles = ir::loop_roles(g, grp.nodes);
  for (size_t i = 0; i < grp.nodes.size(); ++i) {
    if (roles[i] == LoopRole::Reduction || roles[i] == LoopRole::Invalid) return false;
    const ir::Node& n = g.node(grp.nodes[i]);
    const bool reads = std::find(n.inputs.begin(), n.inputs.end(), Value::node(lib)) != n.inputs.end();
    if (reads && roles[i] != LoopRole::Compute) return false;
  }
  return true;
}

}  // namespace

int attach_epilogues(const ir::Graph& g, ir::FusionPlan& plan) {
  const int num_groups = static_cast<int>(plan.groups.size());
  std::vector<int> merged_into(num_groups, -1);  // library group -> the loop group it joins
  std::vector<int> lib_of(num_groups, -1);       // ... and back
  // Per node: how many groups read its first output, and the last of them.
  std::vector<int> readers(g.nodes().size(), 0), reader_of(g.nodes().size(), -1);
  for (int r = 0; r < num_groups; ++r)
    for (Value v : plan.groups[r].inputs)
      if (!v.is_param() && v.index == 0) {
        ++readers[v.def];
        reader_of[v.def] = r;
      }
  int formed = 0;
  for (int k = 0; k < num_groups; ++k) {
    const ir::FusionGroup& lib = plan.groups[k];
    if (lib.kind != ir::KernelKind::Library || !ir::takes_epilogue(g, lib.nodes[0])) continue;
    const int reader = reader_of[lib.nodes[0]];
    const bool single = readers[lib.nodes[0]] == 1;
    // A loop reading two library outputs (matmul + matmul) follows the first.
    if (!single || reader < 0 || lib_of[reader] >= 0 ||
        !fits_epilogue(g, plan.groups[reader], lib.nodes[0]))
      continue;
    merged_into[k] = reader;
    lib_of[reader] = k;
    ++formed;
  }
  if (formed == 0) return 0;
  // The merged group takes the loop group's place: the library node's inputs are ready there, and
  // no group in between reads its output (the loop group is the only reader).
  std::vector<ir::FusionGroup> groups;
  for (int k = 0; k < num_groups; ++k) {
    if (merged_into[k] >= 0) continue;
    ir::FusionGroup grp = std::move(plan.groups[k]);
    if (lib_of[k] >= 0) {
      grp.kind = ir::KernelKind::Epilogue;
      grp.nodes.insert(grp.nodes.begin(), plan.groups[lib_of[k]].nodes[0]);
    }
    groups.push_back(std::move(grp));
  }
  std::vector<int> kernel(g.nodes().size(), -1);
  for (int k = 0; k < static_cast<int>(groups.size()); ++k)
    for (int id : groups[k].nodes) kernel[id] = k;
  ir::fill_group_io(g, kernel, groups);
  plan.groups = std::move(groups);
  return formed;
}

}  // namespace lt::passes
