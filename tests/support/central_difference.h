// Central differences in f64, the independent reference every gradient test checks autograd
// (or a hand-written slope) against: (f(x + h) - f(x - h)) / (2 h), one element at a time.
// Header-only and free of lt's headers, so that the IR's scalar tests use it too.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <utility>
#include <vector>

namespace lt::testing {

/// The step h of a central difference: eps, or eps * max(1, |x|) when relative (a fixed step
/// loses its digits in the rounding of a large x).
struct Step {
  double eps = 1e-6;
  bool relative = false;

  double at(double x) const { return relative ? eps * std::max(1.0, std::abs(x)) : eps; }
};

/// (f(x + h) - f(x - h)) / (2 h) of a function of one double.
template <class F>
double central_difference(F&& f, double x, Step step) {
  const double h = step.at(x);
  return (f(x + h) - f(x - h)) / (2 * h);
}

/// d f(x) / d x[j] by central differences, for each j of `elements` in that order (the result
/// has one entry per element), every other element of x held. `f` gets the perturbed copy of x;
/// `diff(f(x + h e_j), f(x - h e_j))` is the difference taken, by default their subtraction; a
/// caller whose f returns several outputs may subtract them term by term instead, so that
/// outputs the step did not change add no rounding noise.
template <class F, class Diff = std::minus<>>
std::vector<double> central_differences(F&& f, const std::vector<double>& x, Step step,
                                        const std::vector<int64_t>& elements, Diff diff = {}) {
  std::vector<double> out;
  out.reserve(elements.size());
  std::vector<double> y = x;
  for (const int64_t j : elements) {
    const double h = step.at(x[j]);
    y[j] = x[j] + h;
    const auto plus = f(std::as_const(y));
    y[j] = x[j] - h;
    const auto minus = f(std::as_const(y));
    y[j] = x[j];
    out.push_back(static_cast<double>(diff(plus, minus)) / (2 * h));
  }
  return out;
}

/// The same at every element of x: the whole gradient.
template <class F>
std::vector<double> central_differences(F&& f, const std::vector<double>& x, Step step) {
  std::vector<int64_t> all(x.size());
  std::iota(all.begin(), all.end(), int64_t{0});
  return central_differences(std::forward<F>(f), x, step, all);
}

}  // namespace lt::testing
