#include "lt/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <vector>

#include "frontend/options/store.h"

namespace lt::metrics {
namespace {

struct Store {
  std::mutex m;
  std::map<std::string, int64_t, std::less<>> counters;
  std::map<std::string, std::vector<int64_t>, std::less<>> timings;

  ~Store() {
    if (options::enabled(options::Setting::Metrics)) std::fputs(report_locked().c_str(), stderr);
  }

  std::string report_locked() {
    std::string s = "lazytrain metrics\n";
    for (const auto& [k, v] : counters) s += fmt::format("  counter {:<40} {}\n", k, v);
    for (auto& [k, v] : timings) {
      std::vector<int64_t> t = v;
      std::sort(t.begin(), t.end());
      int64_t total = 0;
      for (int64_t x : t) total += x;
      auto pct = [&](double p) { return t[static_cast<size_t>(p * double(t.size() - 1))] / 1e3; };
      s += fmt::format(
          "  timing  {:<40} count={} total={:.3f}ms p50={:.1f}us p90={:.1f}us max={:.1f}us\n", k,
          t.size(), total / 1e6, pct(0.5), pct(0.9), t.back() / 1e3);
    }
    return s;
  }
};

Store& store() {
  static Store s;
  return s;
}

}  // namespace

int64_t counter(std::string_view name) {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.m);
  auto it = s.counters.find(name);
  return it == s.counters.end() ? 0 : it->second;
}

std::string report() {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.m);
  return s.report_locked();
}

void reset() {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.m);
  s.counters.clear();
  s.timings.clear();
}

void count(std::string_view name, int64_t n) {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.m);
  auto it = s.counters.find(name);
  if (it == s.counters.end()) s.counters.emplace(std::string(name), n);
  else it->second += n;
}

void time_ns(std::string_view name, int64_t ns) {
  Store& s = store();
  std::lock_guard<std::mutex> lk(s.m);
  auto it = s.timings.find(name);
  if (it == s.timings.end()) s.timings.emplace(std::string(name), std::vector<int64_t>{ns});
  else it->second.push_back(ns);
}

}  // namespace lt::metrics
