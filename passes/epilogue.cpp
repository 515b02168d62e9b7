#include "passes/epilogue.h"

#include <algorithm>
#include <vector>

#include "ir/kernel_rules.h"
#include "ir/loop_kernel.h"

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
    const bool reads =
        std::find(n.inputs.begin(), n.inputs.end(), Value::node(lib)) != n.inputs.end();
    if (reads && roles[i] != LoopRole::Compute) return false;
  }
  return true;
}

}  // namespace

int attach_epilogues(const ir::Graph& g, const ir::KernelRules& rules, ir::FusionPlan& plan) {
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
    if (lib.kind != ir::KernelKind::Library || !rules.takes_epilogue(g, lib.nodes[0])) continue;
    const int reader = reader_of[lib.nodes[0]];
    // A loop reading two library outputs (matmul + matmul) follows the first.
    if (readers[lib.nodes[0]] != 1 || lib_of[reader] >= 0 ||
        !fits_epilogue(g, plan.groups[reader], lib.nodes[0]))
      continue;
    merged_into[k] = reader;
    lib_of[reader] = k;
    ++formed;
  }
  if (formed == 0) return 0;
  // Where each merged group runs: at the library group's place when everything else the loop
  // reads is ready there and no later group reads a donated parameter it reads (an optimizer
  // update writes its weight over the old one); else right after the last such reader, when
  // that reader runs where it stands (a weight gradient's update then follows the input
  // gradient that read the old weight, and the activations it reads die early); else at
  // the loop group's place. Each keeps the groups in a topological order: the library output
  // has no other reader, a merged group never runs later than the loop group did (whose readers
  // all come after it), and a library group that joins a later loop group produces nothing
  // earlier groups read. Parameters that are not donated (the learning rate and the betas every
  // update reads) are never written, so their readers do not count.
  std::vector<int> group_of(g.nodes().size(), -1);
  for (int k = 0; k < num_groups; ++k)
    for (int id : plan.groups[k].nodes) group_of[id] = k;
  std::vector<char> donated(g.params().size(), 0);
  for (const ir::Donation& d : g.donations()) donated[d.param] = 1;
  std::vector<std::vector<int>> param_readers(g.params().size());  // ascending group indices
  for (int k = 0; k < num_groups; ++k)
    for (Value v : plan.groups[k].inputs)
      if (v.is_param() && donated[v.param_index()]) param_readers[v.param_index()].push_back(k);
  std::vector<std::vector<int>> emit_after(num_groups);  // merged library groups, by place
  for (int k = 0; k < num_groups; ++k) {
    if (merged_into[k] < 0) continue;
    const int r = merged_into[k];
    int place = k;
    for (Value v : plan.groups[r].inputs) {
      if (!v.is_param()) {
        if (v.def != plan.groups[k].nodes[0] && group_of[v.def] >= k) place = r;
        continue;
      }
      if (!donated[v.param_index()]) continue;
      const std::vector<int>& readers = param_readers[v.param_index()];
      for (auto it = std::upper_bound(readers.begin(), readers.end(), k);
           it != readers.end() && *it < r; ++it)
        place = merged_into[*it] < 0 && lib_of[*it] < 0 ? std::max(place, *it) : r;
    }
    emit_after[place].push_back(k);
  }
  auto merged = [&](int lib) {
    ir::FusionGroup grp = std::move(plan.groups[merged_into[lib]]);
    grp.kind = ir::KernelKind::Epilogue;
    grp.nodes.insert(grp.nodes.begin(), plan.groups[lib].nodes[0]);
    return grp;
  };
  std::vector<ir::FusionGroup> groups;
  for (int k = 0; k < num_groups; ++k) {
    if (merged_into[k] < 0 && lib_of[k] < 0) groups.push_back(std::move(plan.groups[k]));
    for (int lib : emit_after[k]) groups.push_back(merged(lib));
  }
  std::vector<int> kernel(g.nodes().size(), -1);
  for (int k = 0; k < static_cast<int>(groups.size()); ++k)
    for (int id : groups[k].nodes) kernel[id] = k;
  ir::fill_group_io(g, kernel, groups);
  plan.groups = std::move(groups);
  return formed;
}

}  // namespace lt::passes
