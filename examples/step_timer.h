// Per-step wall times of a training epoch. The mean includes one-off costs (a lazy run's first
// steps compile their graphs; a warm disk cache only loads them); the median is the steady step.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>

namespace lt::examples {

class StepTimer {
 public:
  void start() { t0_ = std::chrono::steady_clock::now(); }
  void stop() {
    ms_.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count());
  }
  double mean_ms() const {
    double s = 0;
    for (double x : ms_) s += x;
    return ms_.empty() ? 0 : s / static_cast<double>(ms_.size());
  }
  double median_ms() const {
    if (ms_.empty()) return 0;
    std::vector<double> v = ms_;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
  size_t steps() const { return ms_.size(); }

 private:
  std::chrono::steady_clock::time_point t0_;
  std::vector<double> ms_;
};

}  // namespace lt::examples
