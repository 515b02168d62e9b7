#include "passes/kernel_order.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>
#include <utility>
#include <vector>

#include "ir/error.h"

namespace lt::passes {

using ir::Value;

std::vector<int> schedule_kernels(const ir::Graph& g, std::span<const int> kernel,
                                  int num_kernels) {
  std::vector<std::vector<int>> succ(num_kernels);
  std::vector<int> indegree(num_kernels, 0);
  for (int id = 0; id < static_cast<int>(g.nodes().size()); ++id)
    for (Value v : g.node(id).inputs)
      if (!v.is_param() && kernel[v.def] != kernel[id]) {
        succ[kernel[v.def]].push_back(kernel[id]);
        ++indegree[kernel[id]];
      }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int k = 0; k < num_kernels; ++k)
    if (indegree[k] == 0) ready.push(k);
  std::vector<int> order;
  while (!ready.empty()) {
    const int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int s : succ[k])
      if (--indegree[s] == 0) ready.push(s);
  }
  LT_CHECK(static_cast<int>(order.size()) == num_kernels, "fuse: the kernel graph has a cycle");
  return order;
}

// Kahn's algorithm over the groups: among ready groups, those that check data first.
void hoist_checking_groups(const ir::Graph& g, ir::FusionPlan& plan) {
  const int n = static_cast<int>(plan.groups.size());
  std::vector<int> group_of(g.nodes().size(), -1);
  std::vector<bool> checks(n, false);
  for (int k = 0; k < n; ++k)
    for (int id : plan.groups[k].nodes) {
      group_of[id] = k;
      checks[k] = checks[k] || ir::checks_data_at_run_time(g.node(id));
    }
  if (std::find(checks.begin(), checks.end(), true) == checks.end()) return;
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  for (int k = 0; k < n; ++k) {
    std::vector<int> deps;
    for (ir::Value v : plan.groups[k].inputs)
      if (!v.is_param()) deps.push_back(group_of[v.def]);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int d : deps) users[d].push_back(k);
    pending[k] = static_cast<int>(deps.size());
  }
  // Ready groups by (does not check, original position): checking ones come out first.
  std::set<std::pair<bool, int>> ready;
  for (int k = 0; k < n; ++k)
    if (pending[k] == 0) ready.insert({!checks[k], k});
  std::vector<ir::FusionGroup> out;
  out.reserve(n);
  while (!ready.empty()) {
    const int k = ready.begin()->second;
    ready.erase(ready.begin());
    out.push_back(std::move(plan.groups[k]));
    for (int u : users[k])
      if (--pending[u] == 0) ready.insert({!checks[u], u});
  }
  plan.groups = std::move(out);
}

}  // namespace lt::passes
