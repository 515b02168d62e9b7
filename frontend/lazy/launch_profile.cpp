#include "frontend/lazy/launch_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <string_view>

#include "frontend/options/store.h"
#include "lt/lazy.h"
#include "lt/metrics.h"

namespace lt::lazy {
namespace {

struct Profiles {
  std::mutex m;
  std::vector<std::shared_ptr<LaunchProfile>> all;
  ~Profiles() {
    if (profiling()) std::fputs(report().c_str(), stderr);
  }
  std::string report() {
    std::lock_guard<std::mutex> lk(m);
    std::string s = "lazytrain launch profile (LT_PROFILE)\n";
    for (const auto& p : all) s += p->report();
    // The steps' other wait: a batch the data loader had not made yet.
    if (const int64_t batches = metrics::counter("data_batches"); batches > 0) {
      const double ms = static_cast<double>(metrics::total_ns("data_wait")) / 1e6;
      s += fmt::format("data loader: {:.3f} ms waited for {} batches, {:.3f} ms per batch\n", ms,
                       batches, ms / static_cast<double>(batches));
    }
    return s;
  }
};

Profiles& profiles() {
  static Profiles p;
  return p;
}

/// "add+relu+gt": the group's ops in order, each once.
std::string op_list(const ir::Graph& g, const ir::FusionGroup& grp) {
  std::vector<std::string_view> ops;
  for (int id : grp.nodes) {
    const std::string_view m = ir::mnemonic(g.node(id).op);
    if (std::find(ops.begin(), ops.end(), m) == ops.end()) ops.push_back(m);
  }
  return fmt::format("{}", fmt::join(ops, "+"));
}

}  // namespace

LaunchProfile::LaunchProfile(std::string graph, const ir::Graph& g, const ir::FusionPlan& plan,
                             const rt::Executable& exe)
    : graph_(std::move(graph)), ns_(exe.launches().size(), 0) {
  for (const rt::Launch& l : exe.launches()) {
    const bool split = l.kind == rt::Launch::Kind::Start || l.kind == rt::Launch::Kind::Done;
    collective_.push_back(split || (l.kind == rt::Launch::Kind::Library &&
                                    ir::info(l.op).family == ir::OpFamily::Collective));
    const std::string out = l.out_slots.empty() ? std::string("-")
                                                : type_str(exe.slots()[l.out_slots[0]].type);
    const int group = l.group;
    const bool in_plan = group >= 0 && group < static_cast<int>(plan.groups.size());
    if (l.kind == rt::Launch::Kind::Start)
      labels_.push_back(fmt::format("start {} -> {}", l.name, out));
    else if (l.kind == rt::Launch::Kind::Done)
      labels_.push_back(fmt::format("done {} of #{}", l.name, l.start));
    else if (l.epilogue && in_plan)
      labels_.push_back(fmt::format("kernel {} {}+loop {} {}", group, l.name,
                                    type_str(l.epilogue->library_out),
                                    op_list(g, plan.groups[group])));
    else if (l.kind == rt::Launch::Kind::Loop && in_plan)
      labels_.push_back(
          fmt::format("kernel {} loop {} {}", group, out, op_list(g, plan.groups[group])));
    else
      labels_.push_back(fmt::format(
          "{} {} -> {}", l.kind == rt::Launch::Kind::Loop ? "loop" : "library", l.name, out));
  }
}

std::string LaunchProfile::report() const {
  const int64_t total = std::accumulate(ns_.begin(), ns_.end(), int64_t{0});
  std::string s = fmt::format("graph {}: {} runs, {:.3f} ms per run in {} launches\n", graph_,
                              runs_, runs_ ? total / 1e6 / runs_ : 0.0, ns_.size());
  if (runs_ == 0 || total == 0) return s;
  // A collective's start and done (or a blocking collective) take the time the step waits for
  // communication, waiting for slower ranks included; what overlaps other launches is not here.
  int64_t comm = 0;
  for (size_t i = 0; i < ns_.size(); ++i)
    if (collective_[i]) comm += ns_[i];
  if (std::find(collective_.begin(), collective_.end(), true) != collective_.end())
    s += fmt::format("  collectives (exposed communication): {:.3f} ms per run, {:.1f}%\n",
                     comm / 1e6 / runs_, 100.0 * comm / total);
  std::vector<size_t> order(ns_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ns_[a] > ns_[b]; });
  for (size_t i : order)
    s += fmt::format("  {:9.1f} us {:5.1f}%  #{:<3} {}\n", ns_[i] / 1e3 / runs_,
                     100.0 * ns_[i] / total, i, labels_[i]);
  return s;
}

bool profiling() { return options::enabled(options::Setting::Profile); }

void register_profile(std::shared_ptr<LaunchProfile> p) {
  Profiles& all = profiles();
  std::lock_guard<std::mutex> lk(all.m);
  all.all.push_back(std::move(p));
}

}  // namespace lt::lazy

namespace lt::debug {
void set_profiling(bool on) { options::set_number(options::Setting::Profile, on); }
std::string profile_report() { return lazy::profiles().report(); }
}  // namespace lt::debug
