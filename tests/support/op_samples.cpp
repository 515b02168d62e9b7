#include "tests/support/op_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "frontend/dispatch.h"
#include "tests/support/op_samples_builders.h"

namespace lt::testing {

std::string OpSample::label() const { return fmt::format("{}: {}", ir::mnemonic(op), name); }

bool OpSample::any_differentiable() const {
  return std::find(differentiable.begin(), differentiable.end(), true) != differentiable.end();
}

std::vector<OpSample> samples_for(ir::Op op) {
  // One seed per op, from its mnemonic: adding a sample to one op, or a row to the tables, leaves
  // every other op's inputs unchanged.
  uint64_t seed = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : ir::mnemonic(op)) seed = (seed ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  samples::Rng r(seed);
  switch (ir::info(op).family) {
    case ir::OpFamily::Elementwise: return samples::elementwise_samples(op, r);
    case ir::OpFamily::Reduce: return samples::reduce_samples(op, r);
    case ir::OpFamily::View: return samples::view_samples(op, r);
    case ir::OpFamily::Library: return samples::library_samples(op, r);
    case ir::OpFamily::Nn: return samples::nn_samples(op, r);
    case ir::OpFamily::Creation: return samples::creation_samples(op, r);
    case ir::OpFamily::Collective: return samples::collective_samples(op, r);
  }
  return {};
}

namespace {

void retarget(DType& field, DType dt) {
  if (field == DType::F32 || field == DType::F64) field = dt;  // storage types stay
}

}  // namespace

OpSample at_dtype(const OpSample& s, DType dt) {
  OpSample out = s;
  for (Tensor& t : out.inputs)
    if (is_float(t.dtype()) && t.dtype() != dt) t = cast(t, dt);
  std::visit(
      [&](auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, ir::CastAttrs>) retarget(a.to, dt);
        if constexpr (std::is_same_v<A, ir::OneHotAttrs> || std::is_same_v<A, ir::FullAttrs> ||
                      std::is_same_v<A, ir::IotaAttrs> || std::is_same_v<A, ir::RandomAttrs>)
          retarget(a.dtype, dt);
      },
      out.attrs);
  return out;
}

bool takes_floats(const OpSample& s) {
  const OpSample t = at_dtype(s, DType::F32);
  if (t.attrs != s.attrs) return true;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (t.inputs[i].dtype() != s.inputs[i].dtype()) return true;
  return false;
}

std::vector<Tensor> run_sample(const OpSample& s, std::span<const Tensor> inputs) {
  return apply(s.op, inputs, s.attrs, Loc::current());
}

// --- builders ---------------------------------------------------------------------------------

namespace samples {

uint64_t Rng::next() {
  uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
double Rng::uniform(double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53;
}
int64_t Rng::below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

Tensor f64(std::vector<double> v, Shape shape) { return from_vector<double>(v, std::move(shape)); }
Tensor i64(std::vector<int64_t> v, Shape shape) {
  return from_vector<int64_t>(v, std::move(shape));
}

Tensor uniform(Rng& r, Shape shape, double lo, double hi) {
  std::vector<double> v(numel(shape));
  for (double& x : v) x = r.uniform(lo, hi);
  return f64(std::move(v), std::move(shape));
}

Tensor away_from_zero(Rng& r, Shape shape, double lo, double hi) {
  std::vector<double> v(numel(shape));
  for (double& x : v) x = r.uniform(lo, hi) * (r.below(2) ? 1 : -1);
  return f64(std::move(v), std::move(shape));
}

std::vector<Tensor> distinct(Rng& r, const std::vector<Shape>& shapes, double gap) {
  int64_t total = 0;
  for (const Shape& s : shapes) total += numel(s);
  std::vector<double> pool(total);
  // Centered on 0 with a random sub-gap offset, so values are not all multiples of gap.
  const double offset = r.uniform(0, gap / 2);
  for (int64_t i = 0; i < total; ++i)
    pool[i] = (static_cast<double>(i) - static_cast<double>(total) / 2) * gap + offset;
  for (int64_t i = total - 1; i > 0; --i) std::swap(pool[i], pool[r.below(i + 1)]);
  std::vector<Tensor> out;
  auto it = pool.begin();
  for (const Shape& s : shapes) {
    std::vector<double> v(it, it + numel(s));
    it += numel(s);
    out.push_back(f64(std::move(v), s));
  }
  return out;
}

Tensor distinct1(Rng& r, Shape shape, double gap) {
  return distinct(r, {std::move(shape)}, gap)[0];
}

Tensor ids(Rng& r, Shape shape, int64_t n) {
  std::vector<int64_t> v(numel(shape));
  for (int64_t& x : v) x = r.below(n);
  return i64(std::move(v), std::move(shape));
}

Tensor bools(Rng& r, Shape shape) {
  std::vector<bool> v(numel(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = r.below(2) == 1;
  return from_vector<bool>(v, std::move(shape));
}

OpSample make(ir::Op op, std::string name, std::vector<Tensor> inputs, ir::Attrs attrs) {
  OpSample s{op, std::move(name), std::move(inputs), std::move(attrs), {}};
  const bool diff = ir::info(op).differentiable;
  for (const Tensor& t : s.inputs) s.differentiable.push_back(diff && is_float(t.dtype()));
  return s;
}

}  // namespace samples
}  // namespace lt::testing
