// Builders shared by the per-family op_samples_*.cpp files: a seeded generator and input makers
// that keep values away from each op's kinks. Internal to tests/support.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tests/support/op_samples.h"

namespace lt::testing::samples {

/// splitmix64: tiny, seeded and identical on every standard library (unlike <random>'s
/// distributions), so a failing sample reproduces everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next();
  double uniform(double lo, double hi);  // [lo, hi)
  int64_t below(int64_t n);              // [0, n)

 private:
  uint64_t s_;
};

Tensor f64(std::vector<double> v, Shape shape);
Tensor i64(std::vector<int64_t> v, Shape shape);
/// U[lo, hi) elementwise.
Tensor uniform(Rng& r, Shape shape, double lo = -2, double hi = 2);
/// |x| in [lo, hi) with a random sign: keeps abs/relu/reciprocal away from 0.
Tensor away_from_zero(Rng& r, Shape shape, double lo = 0.2, double hi = 2);
/// Tensors of the given shapes whose elements are all distinct, spaced `gap` apart and shuffled:
/// no ties for max/min/maximum/minimum/max_pool2d, even across broadcast operands.
std::vector<Tensor> distinct(Rng& r, const std::vector<Shape>& shapes, double gap = 0.1);
Tensor distinct1(Rng& r, Shape shape, double gap = 0.1);
/// Integers in [0, n) as i64.
Tensor ids(Rng& r, Shape shape, int64_t n);
Tensor bools(Rng& r, Shape shape);

/// A sample whose float inputs are differentiable when the op is (ints, bools never are).
OpSample make(ir::Op op, std::string name, std::vector<Tensor> inputs, ir::Attrs attrs = {});

std::vector<OpSample> elementwise_samples(ir::Op op, Rng& r);
std::vector<OpSample> reduce_samples(ir::Op op, Rng& r);
std::vector<OpSample> view_samples(ir::Op op, Rng& r);
std::vector<OpSample> library_samples(ir::Op op, Rng& r);
std::vector<OpSample> nn_samples(ir::Op op, Rng& r);
std::vector<OpSample> creation_samples(ir::Op op, Rng& r);
std::vector<OpSample> collective_samples(ir::Op op, Rng& r);

}  // namespace lt::testing::samples
