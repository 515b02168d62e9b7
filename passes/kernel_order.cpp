#include "passes/kernel_order.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>
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

// Kahn's algorithm over the groups, taking among the ready groups the one with the smallest key:
// (does not check data, distance to a collective, position in the plan). The distance of a group
// is 0 for a collective, else the least work still to run before some collective it feeds (its
// ancestors not yet scheduled, each weighed by the bytes it reads and writes), and "none" for a
// group that feeds no collective: a replica's gradient buckets start as early as their gradients
// allow, the cheapest to reach first, and the rest of the backward pass runs while they are in
// flight. Counting groups would put a bucket whose one kernel is a large weight-gradient GEMM
// before a bucket of three small kernels ready at the same time, which would then wait behind it.
bool order_groups(const ir::Graph& g, ir::FusionPlan& plan) {
  const int n = static_cast<int>(plan.groups.size());
  std::vector<int> group_of(g.nodes().size(), -1);
  std::vector<bool> checks(n, false);
  std::vector<int> collectives;
  for (int k = 0; k < n; ++k) {
    bool collective = false;
    for (int id : plan.groups[k].nodes) {
      group_of[id] = k;
      checks[k] = checks[k] || ir::checks_data_at_run_time(g.node(id));
      collective = collective || ir::info(g.node(id).op).family == ir::OpFamily::Collective;
    }
    if (collective) collectives.push_back(k);
  }
  const bool any_checks = std::find(checks.begin(), checks.end(), true) != checks.end();
  if (!any_checks && collectives.empty()) return false;
  std::vector<std::vector<int>> users(n), deps(n);
  std::vector<int> pending(n, 0);
  for (int k = 0; k < n; ++k) {
    for (ir::Value v : plan.groups[k].inputs)
      if (!v.is_param()) deps[k].push_back(group_of[v.def]);
    std::sort(deps[k].begin(), deps[k].end());
    deps[k].erase(std::unique(deps[k].begin(), deps[k].end()), deps[k].end());
    for (int d : deps[k]) users[d].push_back(k);
    pending[k] = static_cast<int>(deps[k].size());
  }
  // The bytes a group moves: what it reads and what it writes (at least 1, so a group of empty
  // values still counts).
  std::vector<int64_t> work(n, 1);
  for (int k = 0; k < n; ++k) {
    for (ir::Value v : plan.groups[k].inputs) work[k] += g.type(v).bytes();
    for (ir::Value v : plan.groups[k].outputs) work[k] += g.type(v).bytes();
  }
  // feeds[c][k]: group k is an ancestor of collective c; left[c]: the work of its ancestors not
  // yet run.
  const int nc = static_cast<int>(collectives.size());
  std::vector<std::vector<bool>> feeds(nc, std::vector<bool>(n, false));
  std::vector<int64_t> left(nc, 0);
  for (int c = 0; c < nc; ++c) {
    std::vector<int> stack = deps[collectives[c]];
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      if (feeds[c][k]) continue;
      feeds[c][k] = true;
      left[c] += work[k];
      stack.insert(stack.end(), deps[k].begin(), deps[k].end());
    }
  }
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  auto distance = [&](int k) -> int64_t {
    if (std::find(collectives.begin(), collectives.end(), k) != collectives.end()) return 0;
    int64_t d = kNone;
    for (int c = 0; c < nc; ++c)
      if (feeds[c][k]) d = std::min(d, left[c]);
    return d;
  };
  std::vector<int> ready;
  for (int k = 0; k < n; ++k)
    if (pending[k] == 0) ready.push_back(k);
  std::vector<ir::FusionGroup> out;
  out.reserve(n);
  bool moved = false;
  while (!ready.empty()) {
    auto key = [&](int k) { return std::tuple(!checks[k], distance(k), k); };
    const auto best = std::min_element(ready.begin(), ready.end(),
                                       [&](int a, int b) { return key(a) < key(b); });
    const int k = *best;
    ready.erase(best);
    moved |= k != static_cast<int>(out.size());
    out.push_back(std::move(plan.groups[k]));
    for (int c = 0; c < nc; ++c)
      if (feeds[c][k]) left[c] -= work[k];
    for (int u : users[k])
      if (--pending[u] == 0) ready.push_back(u);
  }
  plan.groups = std::move(out);
  return moved;
}

}  // namespace lt::passes
